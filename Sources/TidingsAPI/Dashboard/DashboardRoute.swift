import HTTPTypes
import EventHTTP

/// `GET /`: the dashboard page, read from the resource bundle and encoded once, at start-up.
enum DashboardRoute {
    /// Loads the page (a missing or broken bundle fails here, at boot, not at the first request)
    /// and registers the route.
    static func register(on router: any RouteRegistrar) throws {
        let html = Array(try DashboardPage.load().html.utf8)
        let page = Response(status: .ok, headers: [
            // Strong, from the content: the page changes only with the binary.
            .eTag: ContentTag.of(html),
            .contentType: "text/html; charset=utf-8",
            .cacheControl: "no-cache",
            .xContentTypeOptions: "nosniff",
            // Everything is inline and same-origin; nothing may be loaded from elsewhere.
            .contentSecurityPolicy: "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
            .referrerPolicy: "no-referrer",
        ], body: html)
        router.get("/") { _, responder in responder.send(page) }
    }
}
