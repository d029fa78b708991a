import Foundation

extension Request {
    /// Decodes the JSON body, applying the content-type rules of the API:
    /// `application/json`, any `application/*+json`, and — so `curl -d` works — a missing type or
    /// `application/x-www-form-urlencoded` carrying JSON are accepted; any other explicit type
    /// throws a 415 problem; malformed JSON or a shape that does not match `T` throws a 400.
    ///
    /// ```swift
    /// do { let body = try request.decode(PutBody.self) } catch { responder.send(error: error) }
    /// ```
    public func decode<T: Decodable>(_ type: T.Type) throws(ProblemDetails) -> T {
        try checkJSONContentType()
        if body.isEmpty {
            throw ProblemDetails(status: 400, title: "Bad Request", detail: "The request body is empty; a JSON document was expected.")
        }
        do {
            return try JSONCoding.decoder.decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw ProblemDetails(status: 400, title: "Bad Request", detail: Self.describe(error))
        } catch {
            throw ProblemDetails(status: 400, title: "Bad Request", detail: "The request body is not valid JSON.")
        }
    }

    /// Throws 415 unless the Content-Type may carry JSON (see `decode(_:)`).
    public func checkJSONContentType() throws(ProblemDetails) {
        guard let raw = headers["Content-Type"] else { return }
        let mediaType = raw.split(separator: ";", maxSplits: 1).first
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        if mediaType == "application/json" || mediaType == "application/x-www-form-urlencoded" { return }
        if mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json") { return }
        throw ProblemDetails(status: 415, title: "Unsupported Media Type",
                             detail: "Content-Type '\(raw)' is not supported; send application/json.")
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
            return keys.isEmpty ? "the body" : "'" + keys.joined(separator: ".") + "'"
        }
        switch error {
        case .dataCorrupted(let context) where context.codingPath.isEmpty:
            return "The request body is not valid JSON."
        case .dataCorrupted(let context):
            return "Invalid value at \(path(context))."
        case .keyNotFound(let key, _):
            return "Missing required field '\(key.stringValue)'."
        case .typeMismatch(let type, let context):
            return "Wrong type at \(path(context)): expected \(type)."
        case .valueNotFound(let type, let context):
            return "Missing value at \(path(context)): expected \(type)."
        @unknown default:
            return "The request body could not be decoded."
        }
    }
}
