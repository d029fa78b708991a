import HTTPTypes
import EventHTTP

/// `GET /`: the dashboard page, compiled into the binary and encoded once.
enum DashboardRoute {
    private static let page = Response(status: .ok, headers: [
        .contentType: "text/html; charset=utf-8",
        .cacheControl: "no-cache",
        .xContentTypeOptions: "nosniff",
        // Everything is inline and same-origin; nothing may be loaded from elsewhere.
        .contentSecurityPolicy: "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        .referrerPolicy: "no-referrer",
    ], body: Array(DashboardPage.html.utf8))

    static func register(on router: RouteGroup) {
        router.get("/") { _, responder in responder.send(page) }
    }
}
