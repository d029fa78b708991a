/// The framing machine's fast path: recognises, in one pass over the bytes and without
/// allocating, a request head that is already in the strict parser's canonical form
/// (`ParsedHead.canonical`), so the connection reads its parts where they lie
/// (`RequestHead(clean:)`) instead of going through the general parser. Nearly every real request (browsers, curl, wrk,
/// the Swift client) is such a head; everything else takes the slow path (`RequestFraming`),
/// which refuses or normalises it as before.
///
/// A head is clean when, byte for byte, it is:
/// - `METHOD SP target SP HTTP/1.0|HTTP/1.1 CRLF`, METHOD one of GET, HEAD, POST, PUT, PATCH,
///   DELETE, OPTIONS; the target only visible ASCII;
/// - header lines `name: value CRLF`: the name only token characters, exactly one space after
///   the colon, the value only visible ASCII and spaces, not starting or ending with a space;
/// - no `Transfer-Encoding`, no `Expect`; at most one `Content-Length` (spelled so), the last
///   line, plain digits without a leading zero, within the body limit;
/// - then the empty line `CRLF`.
/// For such a head the canonical form is the head itself (the tests check this against
/// `RequestFraming` on many generated heads).
enum CleanHead {
    struct Verdict: Equatable {
        /// Bytes of the head, including its empty line.
        var count: Int
        var minorVersion: Int
        /// The announced body length (0 without `Content-Length`).
        var bodyLength: Int
        /// False for HEAD: a body there is dropped, never read.
        var bodyIsRead: Bool
    }

    /// The verdict for the head at the start of `bytes` (which may hold more than the head),
    /// or nil when the head is incomplete or not clean (then the slow path decides). Only the
    /// first `maxHeadBytes` bytes are looked at.
    static func check(_ buffer: UnsafeRawBufferPointer, maxHeadBytes: Int, maxBodyBytes: Int) -> Verdict? {
        let end = min(buffer.count, maxHeadBytes)
        guard end > 0, let base = buffer.baseAddress else { return nil }
        // Every read below is at an index checked against `end` first: plain pointer reads,
        // without the buffer's own bounds check on each byte.
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        var index = 0
        // Method, one space.
        guard let (methodLength, bodyIsRead) = method(bytes, end) else { return nil }
        index = methodLength
        guard index < end, bytes[index] == sp else { return nil }
        index += 1
        // Target: visible ASCII, one space.
        let targetStart = index
        index = skipVisible(bytes, from: index, to: end, lowest: 0x21)
        guard index > targetStart, index < end, bytes[index] == sp else { return nil }
        index += 1
        // Version, CRLF.
        guard index + 10 <= end else { return nil }
        let version = ("HTTP/1." as StaticString).utf8Start
        for offset in 0..<7 where bytes[index + offset] != version[offset] { return nil }
        let minor: Int
        switch bytes[index + 7] {
        case 0x30: minor = 0
        case 0x31: minor = 1
        default: return nil
        }
        guard bytes[index + 8] == cr, bytes[index + 9] == lf else { return nil }
        index += 10

        var bodyLength = 0
        var sawLength = false
        while true {
            guard index + 1 < end else { return nil }
            if bytes[index] == cr {
                guard bytes[index + 1] == lf else { return nil }
                return Verdict(count: index + 2, minorVersion: minor, bodyLength: bodyLength, bodyIsRead: bodyIsRead)
            }
            // Content-Length must be the last line (the canonical form puts it there).
            if sawLength { return nil }
            let nameStart = index
            while index < end, isTokenByte(bytes[index]) { index += 1 }
            let nameLength = index - nameStart
            guard nameLength > 0, index + 1 < end, bytes[index] == colon, bytes[index + 1] == sp else { return nil }
            index += 2
            let valueStart = index
            index = skipVisible(bytes, from: index, to: end, lowest: 0x20)
            let valueEnd = index
            guard index + 1 < end, bytes[index] == cr, bytes[index + 1] == lf else { return nil }
            index += 2
            if valueEnd > valueStart, bytes[valueStart] == sp || bytes[valueEnd - 1] == sp { return nil }
            switch framingField(bytes, nameStart, nameLength) {
            case .other:
                continue
            case .refer:
                return nil
            case .contentLength:
                guard let length = plainLength(bytes, valueStart, valueEnd), length <= maxBodyBytes else { return nil }
                bodyLength = length
                sawLength = true
            }
        }
    }

    /// The index of the first byte from `start` (before `end`) outside `lowest...0x7E`, or
    /// `end`: eight bytes at a time while eight remain, then byte by byte.
    @inline(__always)
    private static func skipVisible(_ bytes: UnsafePointer<UInt8>, from start: Int, to end: Int, lowest: UInt8) -> Int {
        var index = start
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let below = ones &* UInt64(lowest)
        let raw = UnsafeRawPointer(bytes)
        while index + 8 <= end {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
            // A high bit in each byte below `lowest` or above 0x7E (0x7F + 1 and every byte
            // from 0x80 have it). A borrow or carry can also mark a byte after such a byte,
            // never one before it, so the lowest mark (the first byte in memory) is exact.
            let low = (word &- below) & ~word & highs
            let high = ((word &+ ones) | word) & highs
            let marks = low | high
            guard marks == 0 else { return index + marks.trailingZeroBitCount >> 3 }
            index += 8
        }
        while index < end, bytes[index] >= lowest, bytes[index] < 0x7F { index += 1 }
        return index
    }

    /// RFC 9110 tchar (`RequestFraming.isTokenByte`), as two 64-bit masks.
    @inline(__always)
    static func isTokenByte(_ byte: UInt8) -> Bool {
        // Bits 0–63: "!#$%&'*+-.0-9"; bits 64–127: "A-Z^_`a-z|~".
        let low: UInt64 = 0x03FF_6CFA_0000_0000
        let high: UInt64 = 0x57FF_FFFF_C7FF_FFFE
        if byte < 64 { return low >> UInt64(byte) & 1 != 0 }
        if byte < 128 { return high >> UInt64(byte - 64) & 1 != 0 }
        return false
    }

    /// The method at the start and whether libevent reads a body for it; nil for any other.
    private static func method(_ bytes: UnsafePointer<UInt8>, _ end: Int) -> (Int, Bool)? {
        func matches(_ name: StaticString) -> Bool {
            let count = name.utf8CodeUnitCount
            guard count < end else { return false }
            let text = name.utf8Start
            for offset in 0..<count where bytes[offset] != text[offset] { return false }
            return true
        }
        switch bytes[0] {
        case UInt8(ascii: "G"): return matches("GET") ? (3, true) : nil
        case UInt8(ascii: "H"): return matches("HEAD") ? (4, false) : nil
        case UInt8(ascii: "P"):
            if matches("PUT") { return (3, true) }
            if matches("POST") { return (4, true) }
            if matches("PATCH") { return (5, true) }
            return nil
        case UInt8(ascii: "D"): return matches("DELETE") ? (6, true) : nil
        case UInt8(ascii: "O"): return matches("OPTIONS") ? (7, true) : nil
        default: return nil
        }
    }

    private enum Field { case other, contentLength, refer }

    /// Content-Length, or a field only the slow path handles (Transfer-Encoding, Expect).
    private static func framingField(_ bytes: UnsafePointer<UInt8>, _ start: Int, _ count: Int) -> Field {
        func named(_ lowercase: StaticString) -> Bool {
            guard count == lowercase.utf8CodeUnitCount else { return false }
            let text = lowercase.utf8Start
            for offset in 0..<count where bytes[start + offset] | 0x20 != text[offset] { return false }
            return true
        }
        switch bytes[start] | 0x20 {
        case UInt8(ascii: "c"):
            guard count == 14 else { return .other }
            // Two overlapping words: `Content-` and `t-Length` (a byte at a time, both spellings
            // cost about 190 instructions). ORing 0x20 lowers the letters and keeps `-`.
            let raw = UnsafeRawPointer(bytes + start)
            let head = raw.loadUnaligned(as: UInt64.self), tail = raw.loadUnaligned(fromByteOffset: 6, as: UInt64.self)
            guard head | Self.lowerMask == Self.contentLower, tail | Self.lowerMask == Self.lengthLower else { return .other }
            // The canonical form spells it so; any other spelling is re-serialised.
            return head == Self.contentCanonical && tail == Self.lengthCanonical ? .contentLength : .refer
        case UInt8(ascii: "t"): return named("transfer-encoding") ? .refer : .other
        case UInt8(ascii: "e"): return named("expect") ? .refer : .other
        default: return .other
        }
    }

    private static func word(_ text: StaticString) -> UInt64 {
        UnsafeRawPointer(text.utf8Start).loadUnaligned(as: UInt64.self)
    }
    private static let lowerMask: UInt64 = 0x2020_2020_2020_2020
    private static let contentCanonical = word("Content-")
    private static let lengthCanonical = word("t-Length")
    private static let contentLower = word("content-")
    private static let lengthLower = word("t-length")

    /// 1 to 15 digits, no leading zero (a zero length is dropped by the canonical form).
    private static func plainLength(_ bytes: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> Int? {
        guard end > start, end - start <= 15, bytes[start] != UInt8(ascii: "0") else { return nil }
        var value = 0
        for index in start..<end {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit <= 9 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }
}

private let cr: UInt8 = 13
private let lf: UInt8 = 10
private let sp: UInt8 = 32
private let colon = UInt8(ascii: ":")
