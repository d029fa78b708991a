import HTTPTypes

/// An incremental, strict decoder of a chunked request body (RFC 9112 §7.1): hex sizes
/// without signs or spaces, chunk extensions accepted and ignored, CRLF required where the
/// grammar puts it, trailer fields read and dropped. The decoded body is bounded.
///
/// ```swift
/// var decoder = ChunkedDecoder(maxBodyBytes: 1 << 20)
/// let used = try decoder.feed(bytes[...])   // bytes consumed; decoder.body grows
/// if decoder.isComplete { ... decoder.body ... }
/// ```
struct ChunkedDecoder {
    private enum State { case size, data(Int), dataEnd, trailer, done }

    let maxBodyBytes: Int
    private(set) var body: [UInt8] = []
    private var state = State.size
    private var line: [UInt8] = []
    /// A chunk-size line or trailer line longer than this is refused (no unbounded buffering).
    static let maxLineBytes = 4096
    /// Trailer bytes accepted in total.
    static let maxTrailerBytes = 8192
    private var trailerBytes = 0

    init(maxBodyBytes: Int) { self.maxBodyBytes = maxBodyBytes }

    var isComplete: Bool { if case .done = state { return true } else { return false } }

    /// Consumes bytes from `input` until the body is complete or `input` is used up; returns
    /// how many it consumed. Throws a 400 (malformed) or 413 (too large) refusal.
    mutating func feed(_ input: ArraySlice<UInt8>) throws(FramingRefusal) -> Int {
        var index = input.startIndex
        while index < input.endIndex {
            switch state {
            case .done:
                return index - input.startIndex
            case .data(let remaining):
                let take = min(remaining, input.endIndex - index)
                body.append(contentsOf: input[index..<(index + take)])
                index += take
                state = remaining == take ? .dataEnd : .data(remaining - take)
            case .size, .dataEnd, .trailer:
                let byte = input[index]
                index += 1
                line.append(byte)
                guard byte == 10 else {
                    if line.count > Self.maxLineBytes { throw Self.malformed("a chunk line is too long") }
                    continue
                }
                guard line.count >= 2, line[line.count - 2] == 13 else { throw Self.malformed("a line does not end in CRLF") }
                let content = line[0..<(line.count - 2)]
                line.removeAll(keepingCapacity: true)
                try endOfLine(content)
            }
        }
        return index - input.startIndex
    }

    private mutating func endOfLine(_ content: ArraySlice<UInt8>) throws(FramingRefusal) {
        switch state {
        case .size:
            let size = try Self.chunkSize(content)
            if size == 0 { state = .trailer; return }
            guard size <= maxBodyBytes - body.count else { throw RequestFraming.tooLarge(maxBodyBytes) }
            state = .data(size)
        case .dataEnd:
            guard content.isEmpty else { throw Self.malformed("chunk data is not followed by CRLF") }
            state = .size
        case .trailer:
            if content.isEmpty { state = .done; return }
            trailerBytes += content.count
            guard trailerBytes <= Self.maxTrailerBytes else { throw Self.malformed("the trailer is too long") }
            guard let colon = content.firstIndex(of: UInt8(ascii: ":")), colon > content.startIndex,
                  content[content.startIndex..<colon].allSatisfy(RequestFraming.isTokenByte),
                  content[(colon + 1)...].allSatisfy({ $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw Self.malformed("a trailer line is not a header field")
            }
        case .data, .done:
            break
        }
    }

    /// `1*HEXDIG [ BWS ";" chunk-ext ]`; the extension is checked for control bytes and ignored.
    private static func chunkSize(_ content: ArraySlice<UInt8>) throws(FramingRefusal) -> Int {
        let digits = content.prefix(while: isHexDigit)
        guard !digits.isEmpty else { throw malformed("a chunk size is not hexadecimal") }
        let significant = digits.drop(while: { $0 == UInt8(ascii: "0") })
        guard significant.count <= 12 else { throw malformed("a chunk size is out of range") }
        let rest = content[digits.endIndex...].drop(while: { $0 == 32 || $0 == 9 })
        if let first = rest.first {
            guard first == UInt8(ascii: ";") else { throw malformed("a chunk size is followed by something other than an extension") }
            guard rest.allSatisfy({ $0 == 9 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw malformed("a chunk extension contains a control character")
            }
        }
        return significant.reduce(0) { $0 * 16 + hexValue($1) }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
    }

    private static func hexValue(_ byte: UInt8) -> Int {
        switch byte {
        case 0x30...0x39: return Int(byte - 0x30)
        case 0x41...0x46: return Int(byte - 0x41 + 10)
        default: return Int(byte - 0x61 + 10)
        }
    }

    private static func malformed(_ why: String) -> FramingRefusal {
        FramingRefusal(status: .badRequest, detail: "The chunked request body is malformed: \(why).")
    }
}
