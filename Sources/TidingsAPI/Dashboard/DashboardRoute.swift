import EventHTTP

/// `GET /`: the dashboard page, compiled into the binary and encoded once.
enum DashboardRoute {
    private static let page = Response(status: 200, headers: [
        "Content-Type": "text/html; charset=utf-8",
        "Cache-Control": "no-cache",
        "X-Content-Type-Options": "nosniff",
        // Everything is inline and same-origin; nothing may be loaded from elsewhere.
        "Content-Security-Policy": "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
        "Referrer-Policy": "no-referrer",
    ], body: Array(DashboardPage.html.utf8))

    static func register(on router: Router) {
        router.get("/") { _, responder in responder.send(page) }
    }
}
