/// An RFC 9457 problem: the body of every error answer, and the error type handlers throw.
///
/// ```swift
/// throw ProblemDetails(status: 404, title: "Not Found", detail: "No preference 'x'.")
/// responder.send(.problem(status: 422, title: "Unprocessable Content", detail: "...",
///                         errors: [.init(key: "age", detail: "expected integer")]))
/// ```
public struct ProblemDetails: Error, Sendable, Codable, Equatable {
    /// One entry of a multi-field validation failure.
    public struct FieldError: Sendable, Codable, Equatable {
        public var key: String
        public var detail: String
        public init(key: String, detail: String) { self.key = key; self.detail = detail }
    }

    /// The most entries an `errors` list carries (the rest are dropped; `detail` says how many).
    public static let maxErrors = 100

    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    public var errors: [FieldError]?
    /// Extra headers for the answer (e.g. `Allow`, `Retry-After`, `WWW-Authenticate`); not encoded.
    public var headers: HTTPHeaders

    public init(status: Int, title: String? = nil, detail: String, errors: [FieldError]? = nil,
                type: String = "about:blank", headers: HTTPHeaders = HTTPHeaders()) {
        self.type = type
        self.title = title ?? HTTPStatus.reasonPhrase(status)
        self.status = status
        self.detail = detail
        // Bounded, whatever produced them: a client can provoke one entry per item it sends.
        self.errors = errors.map { Array($0.prefix(Self.maxErrors)) }
        self.headers = headers
    }

    enum CodingKeys: String, CodingKey { case type, title, status, detail, errors }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decode(String.self, forKey: .type)
        title = try container.decode(String.self, forKey: .title)
        status = try container.decode(Int.self, forKey: .status)
        detail = try container.decode(String.self, forKey: .detail)
        errors = try container.decodeIfPresent([FieldError].self, forKey: .errors)
        headers = HTTPHeaders()
    }

    public static func == (lhs: ProblemDetails, rhs: ProblemDetails) -> Bool {
        lhs.type == rhs.type && lhs.title == rhs.title && lhs.status == rhs.status
            && lhs.detail == rhs.detail && lhs.errors == rhs.errors
    }
}
