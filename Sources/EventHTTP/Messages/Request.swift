public import HTTPTypes

/// An HTTP request as a handler sees it: an immutable value, safe to keep and pass around.
///
/// ```swift
/// router.put("/preferences/{key}") { request, responder in
///     let key = request.parameters["key"]!          // percent-decoded
///     let body: Body = try request.decode(Body.self) // JSON, Content-Type rules of the API
/// }
/// ```
public struct Request: Sendable {
    /// The method. For `HEAD` routed to a `GET` handler this stays `.head`.
    public let method: HTTPRequest.Method
    /// The request target as received (path and query, still percent-encoded).
    public let target: String
    /// The path part of the target, still percent-encoded.
    public let path: String
    /// The raw query (after `?`), still percent-encoded; nil when there is none.
    public let rawQuery: String?
    /// Header fields as received (names compare case-insensitively).
    public let headers: HTTPFields
    /// The body bytes (empty when there is none).
    public let body: [UInt8]
    /// Values of the path template's `{name}` parameters, percent-decoded. Set by the router.
    public internal(set) var parameters: [String: String] = [:]
    /// The template that matched (e.g. `/preferences/{key}`), for logs and metrics; nil when no
    /// route matched.
    public internal(set) var route: String?
    /// The middleware of the matched route's group (an index into `Router.chains`; 0: none).
    var chain = 0
    /// Monotonic time the request reached the handler layer, in nanoseconds.
    public let receivedAt: UInt64

    /// Builds a request (the server does this; public for tests of handlers).
    public init(method: HTTPRequest.Method, target: String, headers: HTTPFields = [:],
                body: [UInt8] = [], receivedAt: UInt64 = 0) {
        self.method = method
        self.target = target
        if let mark = target.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = String(target[..<mark])
            rawQuery = String(target[target.index(after: mark)...])
        } else {
            path = target
            rawQuery = nil
        }
        self.headers = headers
        self.body = body
        self.receivedAt = receivedAt
    }

    /// Query items in order, `+` and `%XX` decoded. An item whose escapes are broken is kept
    /// undecoded rather than dropped.
    public var queryItems: [(name: String, value: String)] {
        guard let rawQuery, !rawQuery.isEmpty else { return [] }
        return rawQuery.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = PercentDecoding.decode(parts[0], plusAsSpace: true) ?? String(parts[0])
            let rawValue = parts.count > 1 ? parts[1] : ""
            let value = PercentDecoding.decode(rawValue, plusAsSpace: true) ?? String(rawValue)
            return (name: name, value: value)
        }
    }

    /// Whether every query component's percent-escapes are whole and decode to UTF-8 (a
    /// query that is not is a 400 before routing).
    public var hasWellFormedQuery: Bool {
        guard let rawQuery, !rawQuery.isEmpty else { return true }
        return rawQuery.split(separator: "&").allSatisfy { pair in
            pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .allSatisfy { PercentDecoding.decode($0, plusAsSpace: true) != nil }
        }
    }

    /// The first value of query item `name`, decoded; nil when absent.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }
}
