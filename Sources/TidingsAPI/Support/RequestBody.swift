import EventHTTP
import Foundation

extension Request {
    /// Decodes a JSON body the way the API promises: 415 for a content type that cannot carry
    /// JSON, 400 when the body is not JSON at all, and 422 when it is well-formed JSON of the
    /// wrong shape (a number where an object belongs, a missing or mistyped field).
    func decodeBody<T: Decodable>(_ type: T.Type) throws(ProblemDetails) -> T {
        try checkJSONContentType()
        guard !body.isEmpty else {
            throw ProblemDetails(status: 400, title: "Bad Request", detail: "The request body is empty; a JSON document was expected.")
        }
        let data = Data(body)
        guard (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil,
              !Self.hasTrailingComma(body) else {
            throw ProblemDetails(status: 400, title: "Bad Request", detail: "The request body is not valid JSON.")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw ProblemDetails(status: 422, title: "Unprocessable Content", detail: error.clientDescription)
        } catch {
            throw ProblemDetails(status: 422, title: "Unprocessable Content", detail: "The request body has the wrong shape.")
        }
    }

    /// Whether `bytes` hold a comma right before a closing `}` or `]` outside strings:
    /// Foundation's parser accepts that (`{"value": 1,}`), RFC 8259 does not, so it is a 400.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
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

    /// The entity tags of a conditional header (`If-Match`, `If-None-Match`): `nil` when the
    /// header is absent, `["*"]` for a wildcard, otherwise the quoted tags with quotes removed
    /// (weak `W/` prefixes dropped: revisions are compared by value).
    func entityTags(_ header: String) -> [String]? {
        guard let raw = headers[header] else { return nil }
        return raw.split(separator: ",").map { part in
            var tag = part.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
            return tag
        }
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

extension String {
    /// This string as one URL path segment (RFC 3986 unreserved characters kept, the rest
    /// percent-encoded, `/` included).
    var percentEncodedPathSegment: String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)...Unicode.Scalar(127)))
        allowed.insert(charactersIn: "-._~")
        return addingPercentEncoding(withAllowedCharacters: allowed) ?? self
    }
}
