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
    /// What arrived, in one immutable box: a request is copied several times on its way
    /// through the router, the exchange and the filters, and copying one reference instead of
    /// six strings, arrays and fields saved about 2K instructions per request.
    private final class Head: Sendable {
        let method: HTTPRequest.Method
        let target: String
        let path: String
        let rawQuery: String?
        let headers: HTTPFields
        let body: [UInt8]
        let receivedAt: UInt64

        init(method: HTTPRequest.Method, target: String, headers: HTTPFields, body: [UInt8], receivedAt: UInt64) {
            self.method = method
            self.target = target
            // Scanned as contiguous bytes: `utf8.firstIndex(of:)` went index by index (~500
            // instructions for a short path).
            var bytes = target
            let mark = bytes.withUTF8 { ByteScan.firstOffset(of: UInt8(ascii: "?"), in: $0) }
            if let mark {
                let utf8 = target.utf8
                let question = utf8.index(utf8.startIndex, offsetBy: mark)
                path = String(target[..<question])
                rawQuery = String(target[utf8.index(after: question)...])
            } else {
                path = target
                rawQuery = nil
            }
            self.headers = headers
            self.body = body
            self.receivedAt = receivedAt
        }
    }

    private let head: Head

    /// The method. For `HEAD` routed to a `GET` handler this stays `.head`.
    public var method: HTTPRequest.Method { head.method }
    /// The request target as received (path and query, still percent-encoded).
    public var target: String { head.target }
    /// The path part of the target, still percent-encoded.
    public var path: String { head.path }
    /// The raw query (after `?`), still percent-encoded; nil when there is none.
    public var rawQuery: String? { head.rawQuery }
    /// Header fields as received (names compare case-insensitively).
    public var headers: HTTPFields { head.headers }
    /// The body bytes (empty when there is none).
    public var body: [UInt8] { head.body }
    /// What routing found, shared by every request for the same path: set by the router from
    /// its resolved-path table, so a request copy retains one box, not a dictionary and a string.
    final class Routing: Sendable {
        let route: String?
        let parameters: [String: String]
        /// The same, in template order: a route has one or two, and finding one by comparing
        /// names (short ones compare as two words) is cheaper than hashing the name.
        let pairs: [(name: String, value: String)]

        init(route: String?, pairs: [(name: String, value: String)]) {
            self.route = route
            self.pairs = pairs
            var parameters: [String: String] = [:]
            for (name, value) in pairs { parameters[name] = value }
            self.parameters = parameters
        }

        static let none = Routing(route: nil, pairs: [])
    }

    var routing = Routing.none

    /// The client's address: the peer's, or behind a trusted proxy (`--trusted-proxy`) the
    /// client the proxy names (`TrustedProxies.client`). nil for a request built in-process.
    /// For per-client limits, logs and metrics.
    public var clientAddress: String?

    /// Values of the path template's `{name}` parameters, percent-decoded. Set by the router.
    public var parameters: [String: String] { routing.parameters }
    /// The value of the path template's parameter `name` (percent-decoded), as in `parameters`
    /// but without hashing the name: the call for a handler's own parameter.
    public func parameter(_ name: String) -> String? {
        for pair in routing.pairs where pair.name == name { return pair.value }
        return nil
    }
    /// The template that matched (e.g. `/preferences/{key}`), for logs and metrics; nil when no
    /// route matched.
    public var route: String? { routing.route }
    /// The middleware of the matched route's group (an index into `Router.chains`; 0: none).
    var chain = 0
    /// Monotonic time the request reached the handler layer, in nanoseconds.
    public var receivedAt: UInt64 { head.receivedAt }

    /// Builds a request (the server does this; public for tests of handlers).
    public init(method: HTTPRequest.Method, target: String, headers: HTTPFields = [:],
                body: [UInt8] = [], receivedAt: UInt64 = 0) {
        head = Head(method: method, target: target, headers: headers, body: body, receivedAt: receivedAt)
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
