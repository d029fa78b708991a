import Foundation

/// An RFC 9457 problem the server answered with (`{"type", "title", "status", "detail", "errors"}`).
public struct Problem: Sendable, Hashable, Decodable, CustomStringConvertible {
    /// One refused field of a validation problem.
    public struct FieldError: Sendable, Hashable, Decodable {
        public let key: String
        public let detail: String
    }

    public let type: String?
    public let title: String
    public let status: Int
    public let detail: String?
    public let errors: [FieldError]

    public init(title: String, status: Int, detail: String? = nil, type: String? = nil, errors: [FieldError] = []) {
        self.title = title
        self.status = status
        self.detail = detail
        self.type = type
        self.errors = errors
    }

    private enum CodingKeys: String, CodingKey { case type, title, status, detail, errors }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        type = try container.decodeIfPresent(String.self, forKey: .type)
        title = try container.decodeIfPresent(String.self, forKey: .title) ?? "Error"
        status = try container.decodeIfPresent(Int.self, forKey: .status) ?? 0
        detail = try container.decodeIfPresent(String.self, forKey: .detail)
        errors = try container.decodeIfPresent([FieldError].self, forKey: .errors) ?? []
    }

    /// The problem an answer carries, or one made from its status when its body is not a problem.
    static func from(status: Int, body: Data) -> Problem {
        if var problem = try? JSONDecoder().decode(Problem.self, from: body) {
            if problem.status == 0 { problem = Problem(title: problem.title, status: status, detail: problem.detail, type: problem.type, errors: problem.errors) }
            return problem
        }
        return Problem(title: "HTTP status \(status)", status: status)
    }

    public var description: String {
        var text = detail ?? title
        if !errors.isEmpty { text += " (" + errors.map { "\($0.key): \($0.detail)" }.joined(separator: "; ") + ")" }
        return text
    }
}

/// Why a request to a Tidings server failed. The server's own refusals keep its problem.
public enum TidingsClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 412: `If-Match` named a revision that is no longer current (someone else wrote first).
    case conflict(Problem)
    /// 422: the value or body is well-formed but the server's rules refuse it.
    case refused(Problem)
    /// 409: the thing is already there.
    case alreadyExists(Problem)
    /// 404: no such key, thing or post.
    case notFound(Problem)
    /// 401: the token (or stream ticket) is missing or wrong.
    case unauthorized(Problem)
    /// Any other non-2xx answer (400, 413, 503, ...).
    case status(Int, Problem)
    /// No answer: connection refused or lost, timeout, cancelled.
    case transport(String)
    /// A 2xx answer whose body is not what the contract promises, or too large.
    case invalidResponse(String)

    init(status: Int, problem: Problem) {
        switch status {
        case 401: self = .unauthorized(problem)
        case 404: self = .notFound(problem)
        case 409: self = .alreadyExists(problem)
        case 412: self = .conflict(problem)
        case 422: self = .refused(problem)
        default: self = .status(status, problem)
        }
    }

    /// The server's problem, when it answered with one.
    public var problem: Problem? {
        switch self {
        case let .conflict(p), let .refused(p), let .alreadyExists(p), let .notFound(p), let .unauthorized(p), let .status(_, p): p
        case .transport, .invalidResponse: nil
        }
    }

    public var description: String {
        switch self {
        case let .transport(reason): "no answer from the server: \(reason)"
        case let .invalidResponse(reason): "unexpected answer from the server: \(reason)"
        default: "\(problem!.status): \(problem!)"
        }
    }
}
