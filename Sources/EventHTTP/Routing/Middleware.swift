public import HTTPTypes

/// Something requests and answers pass through, attached where routes are registered: to the
/// whole router (`Router.add(middleware:)`) or to a group of routes (`Router.group(_:)`).
///
/// Both steps run on the loop thread. `intercept` runs after routing found the route and
/// before its handler (so unknown paths and methods still answer 404/405 first); `finish` runs
/// on every answer the middleware's routes give (router-wide middleware: on every answer,
/// including 404/405, refusals and the head of event streams): the route's group middleware
/// first, then the router's, each in the order added.
///
/// ```swift
/// struct RequireKey: Middleware {
///     func intercept(_ request: Request) -> Response? {
///         request.headers.first(.authorization) == nil ? .problem(status: .unauthorized, detail: "...") : nil
///     }
/// }
/// let admin = router.group(RequireKey())
/// admin.post("/admin/reset") { _, responder in ... }
/// ```
public protocol Middleware {
    /// A response to answer with at once (e.g. 401), or nil to go on to the handler.
    func intercept(_ request: Request) -> Response?
    /// Adjusts an answer before it is sent (headers, metrics).
    func finish(_ request: Request, _ response: inout Response)
    /// The head check (API.md "Refused at the head"): when a request's head is complete and the
    /// body it announces is still to come, a response here answers it before any of the body is
    /// read, and the connection closes. `request` is routed, with an empty body. Must be pure —
    /// it consumes nothing (a single-use ticket is redeemed by `intercept`, which still runs
    /// on the whole request) — and cheap. Default: nil, decide on the whole request.
    func checkHead(_ request: Request) -> Response?
}

extension Middleware {
    public func intercept(_ request: Request) -> Response? { nil }
    public func finish(_ request: Request, _ response: inout Response) {}
    public func checkHead(_ request: Request) -> Response? { nil }
}

/// Routes registered with the same middleware, which runs (after the router's own) for each of
/// them. Groups nest: `group.group(more)` runs `group`'s middleware, then `more`.
///
/// ```swift
/// let protected = router.group(AccessCheck(policy))
/// protected.get("/preferences") { request, responder in ... }
/// ```
public struct RouteGroup {
    let router: Router
    /// The group's middleware, as an index into `Router.chains`.
    let chain: Int

    /// Registers `handler` for `method` on `template`, behind this group's middleware.
    public func on(_ method: HTTPRequest.Method, _ template: String, _ handler: @escaping RouteHandler) {
        router.register(method, template, chain: chain, handler)
    }

    public func get(_ template: String, _ handler: @escaping RouteHandler) { on(.get, template, handler) }
    public func post(_ template: String, _ handler: @escaping RouteHandler) { on(.post, template, handler) }
    public func put(_ template: String, _ handler: @escaping RouteHandler) { on(.put, template, handler) }
    public func patch(_ template: String, _ handler: @escaping RouteHandler) { on(.patch, template, handler) }
    public func delete(_ template: String, _ handler: @escaping RouteHandler) { on(.delete, template, handler) }

    /// A group inside this one: its routes pass this group's middleware, then `middleware`.
    public func group(_ middleware: any Middleware...) -> RouteGroup {
        router.group(router.chains[chain] + middleware)
    }
}
