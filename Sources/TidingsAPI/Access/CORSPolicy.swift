import HTTPTypes
import EventHTTP
import Foundation

/// Cross-origin access for browsers (openapi.yaml "Access", `--cors-origin`), router-wide
/// middleware so every answer — routed, 401, 404/405, preflight and event-stream heads — carries it.
///
/// - Allowed origin: `Access-Control-Allow-Origin` echoes it (with `Vary: Origin`), or is `*`
///   when `*` is configured. Credentials mode is never enabled (`Allow-Credentials` is never
///   sent): the API authenticates with bearer headers, not cookies, and `*` forbids it anyway.
/// - `ETag`, `Location`, `Tidings-Revision` are exposed to scripts.
/// - Preflight (`OPTIONS` with `Access-Control-Request-Method`): the router's 204 with `Allow`
///   gains `Access-Control-Allow-Methods` (the route's methods), `-Allow-Headers` and `-Max-Age`.
/// - Other origins get no CORS headers; without `--cors-origin` the middleware is not installed.
struct CORSPolicy: Middleware {
    let allowsAnyOrigin: Bool
    let origins: Set<String>

    static let exposedHeaders = "ETag, Location, Tidings-Revision"
    static let allowedHeaders = "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-API-Key"
    static let maxAge = "600"

    /// nil when no origin is configured (no CORS at all).
    init?(origins configured: [String]) {
        let cleaned = configured.map { origin -> String in
            var origin = origin.trimmingCharacters(in: .whitespaces)
            while origin.hasSuffix("/") { origin.removeLast() }
            return origin.lowercased()
        }.filter { !$0.isEmpty }
        guard !cleaned.isEmpty else { return nil }
        allowsAnyOrigin = cleaned.contains("*")
        origins = Set(cleaned)
    }

    /// Whether `origin` is allowed (`*`, or one of the configured origins).
    func allows(_ origin: String) -> Bool {
        allowsAnyOrigin || origins.contains(origin.lowercased())
    }

    func finish(_ request: Request, _ response: inout Response) {
        // The answer depends on Origin whenever the origin is echoed: caches must key on it,
        // also for requests without one (or a cached non-CORS answer would be served to a page).
        if !allowsAnyOrigin { response.headers.append(HTTPField(name: .vary, value: "Origin")) }
        guard let origin = request.headers.first(.origin), allowsAnyOrigin || origins.contains(origin.lowercased()) else {
            return
        }
        response.headers[.accessControlAllowOrigin] = allowsAnyOrigin ? "*" : origin
        response.headers[.accessControlExposeHeaders] = Self.exposedHeaders
        if request.method == .options, request.headers.first(.accessControlRequestMethod) != nil,
           response.status == .noContent, let allow = response.headers.first(.allow) {
            response.headers[.accessControlAllowMethods] = allow
            response.headers[.accessControlAllowHeaders] = Self.allowedHeaders
            response.headers[.accessControlMaxAge] = Self.maxAge
        }
    }
}
