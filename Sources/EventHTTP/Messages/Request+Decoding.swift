import HTTPTypes
import Foundation

extension Request {
    /// Decodes the JSON body, applying the content-type rules of the API:
    /// `application/json`, any `application/*+json`, and — so `curl -d` works — a missing type or
    /// `application/x-www-form-urlencoded` carrying JSON are accepted; any other explicit type
    /// throws a 415 problem. A body that is not JSON at all (malformed, empty, a trailing comma)
    /// throws a 400, and so does an object naming one member twice (parsers disagree on which
    /// one counts); well-formed JSON of the wrong shape (a missing or mistyped field, a number
    /// where an object belongs) throws a 422 that names the field.
    ///
    /// ```swift
    /// do { let body = try request.decode(PutBody.self) } catch { responder.send(error: error) }
    /// ```
    public func decode<T: Decodable>(_ type: T.Type) throws(ProblemDetails) -> T {
        try checkJSONContentType()
        guard !body.isEmpty else {
            throw ProblemDetails(status: .badRequest, detail: "The request body is empty; a JSON document was expected.")
        }
        // JSON text is UTF-8 (RFC 8259 §8.1). Foundation's parser would also guess UTF-16 or
        // UTF-32 from NUL bytes or a byte-order mark; a NUL byte is never valid JSON text anyway.
        guard body.withUnsafeBufferPointer({ memchr($0.baseAddress!, 0, $0.count) == nil }),
              String(validating: body, as: UTF8.self) != nil else {
            throw ProblemDetails(status: .badRequest, detail: "The request body is not UTF-8 JSON.")
        }
        // Before any parsing: the parser hashes member names, and hashing a long run of
        // combining marks is quadratic (see JSONShape.isStreamSafe).
        guard JSONShape.isStreamSafe(body) else { throw Self.notStreamSafe }
        let data = Data(body)
        guard (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil,
              !Self.hasTrailingComma(body) else {
            throw ProblemDetails(status: .badRequest, detail: "The request body is not valid JSON.")
        }
        if let name = JSONShape.duplicateMemberName(body) { throw Self.duplicateMember(name) }
        do {
            return try JSONCoding.decoder.decode(T.self, from: data)
        } catch let error as DecodingError {
            throw ProblemDetails(status: .unprocessableContent, detail: error.clientDescription)
        } catch {
            throw ProblemDetails(status: .unprocessableContent, detail: "The request body has the wrong shape.")
        }
    }

    /// The answer to an object naming one member twice: 400 (readers disagree on which counts).
    static func duplicateMember(_ name: String) -> ProblemDetails {
        let shown = name.unicodeScalars.count > 64 ? String(String.UnicodeScalarView(name.unicodeScalars.prefix(64))) + "…" : name
        return ProblemDetails(status: .badRequest,
                              detail: "The request body names the member \"\(shown)\" twice in one object; member names must be unique (RFC 8259 §4, I-JSON).")
    }

    /// 415 for a body a web page sent as a CORS "simple" request (no type, or the form type).
    static func pageNeedsJSONType(_ type: String?) -> ProblemDetails {
        ProblemDetails(status: .unsupportedMediaType,
                       detail: "A request with an Origin must send its JSON body as Content-Type: application/json (not \(type.map { "'\($0)'" } ?? "without a type")).")
    }

    /// The answer to a body with a run of more than 30 combining marks: 422.
    static var notStreamSafe: ProblemDetails {
        ProblemDetails(status: .unprocessableContent,
                       detail: "The request body holds more than \(JSONShape.maxNonStarterRun) combining marks in a row; text must be in Unicode's stream-safe format (UAX #15).")
    }

    /// Whether `bytes` hold a comma right before a closing `}` or `]` outside strings:
    /// Foundation's parser accepts that (`{"value": 1,}`), RFC 8259 does not, so it is a 400.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer(hasTrailingComma)
    }

    private static func hasTrailingComma(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var inString = false, escaped = false, afterComma = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if afterComma { return true }
            case UInt8(ascii: "\""): inString = true
            default: break
            }
            afterComma = byte == UInt8(ascii: ",")
        }
        return false
    }

    /// Throws 415 unless the Content-Type may carry JSON (see `decode(_:)`).
    ///
    /// A missing type and `application/x-www-form-urlencoded` are JSON only for requests without
    /// an `Origin`, i.e. not sent by a web page: they are what a browser's CORS "simple" request
    /// sends without asking the server first, so accepting them from a page would let any site
    /// write to a server without credentials. `curl -d` sends no `Origin`.
    public func checkJSONContentType() throws(ProblemDetails) {
        guard let raw = headers.first(.contentType) else {
            if headers.first(.origin) != nil { throw Self.pageNeedsJSONType(nil) }
            return
        }
        // What nearly every client sends, decided without trimming or lower-casing a copy.
        if ByteScan.equals(raw, "application/json") { return }
        let mediaType = raw.split(separator: ";", maxSplits: 1).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if mediaType == "application/json" { return }
        if mediaType == "application/x-www-form-urlencoded" {
            if headers.first(.origin) != nil { throw Self.pageNeedsJSONType(raw) }
            return
        }
        if mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json") { return }
        throw ProblemDetails(status: .unsupportedMediaType,
                             detail: "Content-Type '\(raw)' is not supported; send application/json.")
    }
}

extension DecodingError {
    /// Says which field is missing or mistyped, without Swift type names.
    var clientDescription: String {
        func path(_ context: Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "the body" : "'" + keys.joined(separator: ".") + "'"
        }
        switch self {
        case let .keyNotFound(key, _):
            return "Missing required field '\(key.stringValue)'."
        case let .typeMismatch(type, context):
            return "Wrong type at \(path(context)): expected \(Self.jsonName(of: type))."
        case let .valueNotFound(type, context):
            return "Missing value at \(path(context)): expected \(Self.jsonName(of: type))."
        case let .dataCorrupted(context):
            return "Invalid value at \(path(context))."
        @unknown default:
            return "The request body has the wrong shape."
        }
    }

    private static func jsonName(of type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Bool.Type: "a boolean"
        case is Int.Type, is Int64.Type, is UInt64.Type: "an integer"
        case is Double.Type: "a number"
        case is [Any].Type: "an array"
        case is [String].Type: "an array of strings"
        default: "an object"
        }
    }
}
