public import HTTPTypes

/// Why the server refuses a request before routing it: the status and a detail for the problem
/// answer. Every refusal closes the connection afterwards.
public struct FramingRefusal: Error, Equatable, Sendable {
    public var status: HTTPResponse.Status
    public var detail: String
    public init(status: HTTPResponse.Status, detail: String) { self.status = status; self.detail = detail }
}

/// How the body of a request is framed.
enum BodyFraming: Equatable {
    case none
    case length(Int)
    case chunked
}

/// A request head as the server's own strict parser understood it (one `Content-Length` at
/// most, no `Transfer-Encoding`, no `Expect`, no folded lines): the fields without the framing
/// ones, the body's framing, and whether the client waits for "100 Continue".
struct ParsedHead: Equatable {
    var method: HTTPRequest.Method
    /// 0 for HTTP/1.0, 1 for HTTP/1.1.
    var minorVersion: Int
    var target: String
    /// Header fields other than the framing ones, values trimmed.
    var fields: [(name: String, value: String)]
    var body: BodyFraming
    var expectsContinue: Bool

    /// A body on HEAD or TRACE is dropped, never read (neither answers with what was sent).
    var bodyIsRead: Bool { method != .head && method != .trace }

    /// The head in canonical form (what `CleanHead` recognises; the tests and the fuzz target
    /// compare readings with it); `length` replaces whatever framing the client used.
    func canonical(length: Int?) -> [UInt8] {
        var text = "\(method.rawValue) \(target) HTTP/1.\(minorVersion)\r\n"
        for field in fields { text += "\(field.name): \(field.value)\r\n" }
        if let length { text += "Content-Length: \(length)\r\n" }
        text += "\r\n"
        return Array(text.utf8)
    }

    static func == (lhs: ParsedHead, rhs: ParsedHead) -> Bool {
        lhs.canonical(length: nil) == rhs.canonical(length: nil) && lhs.body == rhs.body
            && lhs.expectsContinue == rhs.expectsContinue
    }
}

/// The server's one reading of a request head (RFC 9112), strict: anything two parsers (a
/// proxy in front, say, and this server) could read differently is refused before a route
/// sees it.
///
/// ```swift
/// switch RequestFraming.parseHead(bytes, maxBodyBytes: 4 << 20) {
/// case .success(let head): ... head.canonical(length: ...)
/// case .failure(let refusal): ... answer refusal.status, close
/// }
/// ```
enum RequestFraming {
    /// `bytes`: the head without its terminating empty line (CRLF or bare LF line ends).
    static func parseHead(_ bytes: ArraySlice<UInt8>, maxBodyBytes: Int) -> Result<ParsedHead, FramingRefusal> {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        while start < bytes.endIndex, let index = ByteScan.firstIndex(of: lf, in: bytes[start...]) {
            var end = index
            if end > start, bytes[end - 1] == cr { end -= 1 }
            lines.append(bytes[start..<end])
            start = index + 1
        }
        if start < bytes.endIndex { lines.append(bytes[start..<bytes.endIndex]) }
        guard let requestLine = lines.first else { return .failure(bad("The request line is missing.")) }

        // Request line: method SP target SP HTTP/x.y, single spaces, nothing else.
        var parts: [ArraySlice<UInt8>] = []
        var partStart = requestLine.startIndex
        while parts.count < 3, let space = ByteScan.firstIndex(of: sp, in: requestLine[partStart...]) {
            parts.append(requestLine[partStart..<space])
            partStart = space + 1
        }
        parts.append(requestLine[partStart...])
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else {
            return .failure(bad("The request line must be 'METHOD target HTTP/1.1'."))
        }
        guard ByteScan.all(parts[0], isTokenByte) else { return .failure(bad("The method is not a token.")) }
        guard ByteScan.all(parts[1], { $0 > 0x20 && $0 != 0x7F }) else {
            return .failure(bad("The request target contains spaces or control characters."))
        }
        let minor: Int
        switch versionOf(parts[2]) {
        case .some((1, 0)): minor = 0
        case .some((1, 1)): minor = 1
        case .some: return .failure(FramingRefusal(status: .httpVersionNotSupported, detail: "Only HTTP/1.0 and HTTP/1.1 are supported."))
        case .none: return .failure(bad("The HTTP version is malformed."))
        }
        let methodName = String(decoding: parts[0], as: UTF8.self)
        guard let method = HTTPRequest.Method(rawValue: methodName), HTTPRequest.Method.served.contains(method) else {
            return .failure(FramingRefusal(status: .notImplemented, detail: "The method '\(methodName.prefix(32))' is not implemented."))
        }

        var fields: [(name: String, value: String)] = []
        var lengths: [ArraySlice<UInt8>] = []
        var encodings: [String] = []
        var expectations: [String] = []
        for line in lines.dropFirst() {
            guard let first = line.first else { return .failure(bad("The head contains an empty line.")) }
            if first == sp || first == tab {
                return .failure(bad("Folded header lines (starting with whitespace) are not accepted."))
            }
            guard let colon = ByteScan.firstIndex(of: UInt8(ascii: ":"), in: line), colon > line.startIndex else {
                return .failure(bad("A header line has no name or no colon."))
            }
            let name = line[line.startIndex..<colon]
            guard ByteScan.all(name, isTokenByte) else {
                return .failure(bad("A header name contains whitespace or a character that is not allowed."))
            }
            let raw = line[(colon + 1)...]
            guard ByteScan.all(raw, { $0 == tab || ($0 >= 0x20 && $0 != 0x7F) }) else {
                return .failure(bad("A header value contains a control character."))
            }
            let value = trimmed(raw)
            let nameText = String(decoding: name, as: UTF8.self)
            switch nameText.lowercased() {
            case "content-length": lengths.append(value)
            case "transfer-encoding": encodings.append(String(decoding: value, as: UTF8.self))
            case "expect": expectations.append(String(decoding: value, as: UTF8.self))
            default: fields.append((nameText, String(decoding: value, as: UTF8.self)))
            }
        }

        var body = BodyFraming.none
        if !encodings.isEmpty {
            guard encodings.count == 1, encodings[0].lowercased() == "chunked" else {
                return .failure(bad("Transfer-Encoding other than a single 'chunked' is not accepted."))
            }
            guard lengths.isEmpty else { return .failure(bad("A request cannot carry both Transfer-Encoding and Content-Length.")) }
            guard minor == 1 else { return .failure(bad("Transfer-Encoding needs HTTP/1.1.")) }
            body = .chunked
        } else if !lengths.isEmpty {
            guard lengths.count == 1 else { return .failure(bad("More than one Content-Length header.")) }
            let digits = lengths[0]
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(bad("Content-Length must be plain digits."))
            }
            let significant = digits.drop(while: { $0 == 0x30 })
            guard significant.count <= 15 else { return .failure(tooLarge(maxBodyBytes)) }
            let length = significant.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            guard length <= maxBodyBytes else { return .failure(tooLarge(maxBodyBytes)) }
            if length > 0 { body = .length(length) }
        }

        var expectsContinue = false
        if !expectations.isEmpty, minor == 1 {
            guard expectations.count == 1, expectations[0].lowercased() == "100-continue" else {
                return .failure(FramingRefusal(status: .expectationFailed, detail: "The only expectation supported is 'Expect: 100-continue'."))
            }
            expectsContinue = body != .none
        }
        return .success(ParsedHead(method: method, minorVersion: minor, target: String(decoding: parts[1], as: UTF8.self),
                                   fields: fields, body: body, expectsContinue: expectsContinue))
    }

    static func tooLarge(_ limit: Int) -> FramingRefusal {
        FramingRefusal(status: .contentTooLarge, detail: "The request body is larger than the server accepts (\(limit) bytes).")
    }

    private static func bad(_ detail: String) -> FramingRefusal { FramingRefusal(status: .badRequest, detail: detail) }

    /// `HTTP/<digits>.<digits>` → (major, minor), saturating huge numbers; nil when malformed.
    private static func versionOf(_ text: ArraySlice<UInt8>) -> (Int, Int)? {
        let prefix = Array("HTTP/".utf8)
        guard text.count > prefix.count + 2, Array(text.prefix(prefix.count)) == prefix else { return nil }
        let rest = text.dropFirst(prefix.count)
        let pieces = rest.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard pieces.count == 2 else { return nil }
        func number(_ digits: ArraySlice<UInt8>) -> Int? {
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return digits.count > 6 ? Int.max : digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
        guard let major = number(pieces[0]), let minor = number(pieces[1]) else { return nil }
        guard pieces[0].count == 1, pieces[1].count == 1 else { return (major == 1 && minor <= 1 ? 2 : major, minor) }
        return (major, minor)
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == sp || first == tab { slice = slice.dropFirst() }
        while let last = slice.last, last == sp || last == tab { slice = slice.dropLast() }
        return slice
    }

    /// RFC 9110 tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}

private let cr: UInt8 = 13
private let lf: UInt8 = 10
private let sp: UInt8 = 32
private let tab: UInt8 = 9
