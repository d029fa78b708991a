public import HTTPTypes

/// An RFC 9457 problem: the body of every error answer, and the error type handlers throw.
///
/// ```swift
/// throw ProblemDetails(status: .notFound, detail: "No preference 'x'.")
/// responder.send(.problem(status: .unprocessableContent, detail: "...",
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
    /// The status' reason phrase unless the problem names itself otherwise.
    public var title: String
    /// The answer's status; encoded as its number.
    public var status: HTTPResponse.Status
    public var detail: String
    public var errors: [FieldError]?
    /// Extra headers for the answer (e.g. `Allow`, `Retry-After`, `WWW-Authenticate`); not encoded.
    public var headers: HTTPFields

    public init(status: HTTPResponse.Status, title: String? = nil, detail: String, errors: [FieldError]? = nil,
                type: String = "about:blank", headers: HTTPFields = [:]) {
        self.type = type
        self.title = title ?? status.phrase
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
        let code = try container.decode(Int.self, forKey: .status)
        guard (100...999).contains(code) else {
            throw DecodingError.dataCorruptedError(forKey: .status, in: container, debugDescription: "not an HTTP status")
        }
        status = HTTPResponse.Status(code: code)
        detail = try container.decode(String.self, forKey: .detail)
        errors = try container.decodeIfPresent([FieldError].self, forKey: .errors)
        headers = [:]
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(type, forKey: .type)
        try container.encode(title, forKey: .title)
        try container.encode(status.code, forKey: .status)
        try container.encode(detail, forKey: .detail)
        try container.encodeIfPresent(errors, forKey: .errors)
    }

    public static func == (lhs: ProblemDetails, rhs: ProblemDetails) -> Bool {
        lhs.type == rhs.type && lhs.title == rhs.title && lhs.status == rhs.status
            && lhs.detail == rhs.detail && lhs.errors == rhs.errors
    }
}
