import Foundation
public import HTTPTypes
/// An HTTP response value. Build one and hand it to `Responder.send(_:)`.
///
/// ```swift
/// responder.send(.json(record))                         // 200 application/json
/// responder.send(.json(created, status: .created, headers: [.location: "/things/YOLO"]))
/// responder.send(.problem(status: .notFound, detail: "No preference 'x'."))
/// ```
/// `Content-Length` is added when sending (also for `HEAD`, whose body is never sent).
public struct Response: Sendable {
    public var status: HTTPResponse.Status
    public var headers: HTTPFields
    public var body: [UInt8]
    /// Fields sent after `headers`, for middleware that adds the same field to every answer:
    /// assigning a prepared array here copies nothing, where appending to `headers` copies
    /// them first whenever they are shared (a route answering from a cached response), about
    /// 1K instructions per request. Nothing here replaces a field of `headers`; `allHeaders`
    /// is both, as sent.
    public var addedFields: [HTTPField] = []

    /// `headers` followed by `addedFields`: every field the answer is sent with.
    public var allHeaders: HTTPFields {
        guard !addedFields.isEmpty else { return headers }
        var all = headers
        all.append(contentsOf: addedFields)
        return all
    }

    public init(status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `value` encoded with the shared encoder as `application/json`. An encoding failure
    /// (a bug, not client input) becomes a 500 problem.
    public static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok,
                                         headers: HTTPFields = [:]) -> Response {
        do {
            let data = try JSONCoding.encoder.encode(value)
            var response = Response(status: status, headers: headers, body: Array(data))
            response.headers[.contentType] = "application/json"
            return response
        } catch {
            return .problem(status: .internalServerError, detail: "The response could not be encoded.")
        }
    }

    /// Already-encoded JSON bytes (for bodies encoded once and served many times).
    public static func json(bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var response = Response(status: status, headers: headers, body: bytes)
        response.headers[.contentType] = "application/json"
        return response
    }

    /// Plain text (`text/plain; charset=utf-8` unless `contentType` says otherwise).
    public static func text(_ text: String, status: HTTPResponse.Status = .ok,
                            contentType: String = "text/plain; charset=utf-8") -> Response {
        Response(status: status, headers: [.contentType: contentType], body: Array(text.utf8))
    }

    /// An RFC 9457 problem answer (`application/problem+json`).
    public static func problem(status: HTTPResponse.Status, title: String? = nil, detail: String,
                               errors: [ProblemDetails.FieldError]? = nil,
                               headers: HTTPFields = [:]) -> Response {
        .problem(ProblemDetails(status: status, title: title, detail: detail, errors: errors, headers: headers))
    }

    /// The answer for a thrown or built `ProblemDetails` (its headers included).
    public static func problem(_ problem: ProblemDetails) -> Response {
        var response = (try? JSONCoding.encoder.encode(problem)).map {
            Response(status: problem.status, headers: problem.headers, body: Array($0))
        } ?? Response(status: problem.status, headers: problem.headers)
        response.headers[.contentType] = "application/problem+json"
        return response
    }

    /// The answer for any error: a `ProblemDetails` as itself, anything else as a 500 problem
    /// that does not leak the error's text.
    public static func error(_ error: any Error) -> Response {
        if let problem = error as? ProblemDetails { return .problem(problem) }
        return .problem(status: .internalServerError, detail: "The server failed to answer this request.")
    }
}
