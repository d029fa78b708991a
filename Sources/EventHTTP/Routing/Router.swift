public import HTTPTypes

/// A route handler: reads the request, answers through the responder now or later (on the loop
/// thread, exactly once). A thrown error is answered as `Response.error(_:)` if nothing was sent.
public typealias RouteHandler = (Request, Responder) throws -> Void

/// Maps method + path template to handlers, and runs the middleware every request and response
/// pass through (the router's own, and that of the route's group: see `Middleware`).
///
/// Templates are literal segments and `{name}` parameters: `/preferences/{key}`. A literal
/// segment wins over a parameter at the same position (`/preferences/events` beats
/// `/preferences/{key}`), with backtracking, so both stay reachable. Parameters are
/// percent-decoded. `HEAD` is served by the `GET` handler (no body sent), `OPTIONS` answers 204
/// with `Allow`, an unknown path answers 404 and a known path with another method 405 with
/// `Allow`, all as problem details.
///
/// Loop-thread confined: register routes before `HTTPServer.start()` or on the loop thread.
/// Here: registration and matching; running a request through it: `Router+Dispatch`.
///
/// ```swift
/// router.get("/preferences/{key}") { request, responder in
///     responder.send(.json(store.record(request.parameters["key"]!)))
/// }
/// ```
public final class Router {
    final class Node {
        var literals: [String: Node] = [:]
        /// The longest literal's UTF-8 length: a longer segment matches none without being
        /// hashed (hashing a client's segment of combining marks is quadratic).
        var longestLiteral = 0
        var parameter: (name: String, node: Node)?
        var handlers = RouteTable()
        var template = ""
    }

    private let root = Node()
    /// Templates without parameters, by their exact path: the common request (`/healthz`,
    /// `/preferences`) is found with one hash lookup instead of splitting and walking the tree.
    /// Only a path spelled exactly like the template hits; anything else (percent-encoded,
    /// a parameter) takes the tree, which gives the same node.
    private var staticRoutes: [String: Node] = [:]
    /// Router-wide middleware, in the order added.
    private(set) var middleware: [any Middleware] = []
    /// Every group's middleware list; a route names its group's by index (0: no group).
    private(set) var chains: [[any Middleware]] = [[]]
    /// The server this router belongs to (set by `HTTPServer.init`): the owner of streams a
    /// route starts in-process, so its broadcasts reach them.
    weak var owner: HTTPServer?
    /// Event streams started in-process and still open (`Router.respond(to:)`), which
    /// `HTTPServer.broadcast` feeds too once one was started.
    let inProcessStreams = InProcessStreams()

    public init() {}

    /// Registers `handler` for `method` on `template`, with no group middleware; a second
    /// registration replaces the first.
    public func on(_ method: HTTPRequest.Method, _ template: String, _ handler: @escaping RouteHandler) {
        register(method, template, chain: 0, handler)
    }

    /// A group whose routes pass `middleware` (after the router's own), in order.
    public func group(_ middleware: any Middleware...) -> RouteGroup { group(middleware) }

    func group(_ middleware: [any Middleware]) -> RouteGroup {
        chains.append(middleware)
        return RouteGroup(router: self, chain: chains.count - 1)
    }

    /// Adds middleware for every request that found a route and for every answer, in order of
    /// addition, before any group's (see `Middleware`).
    public func add(middleware: any Middleware) {
        self.middleware.append(middleware)
    }

    func register(_ method: HTTPRequest.Method, _ template: String, chain: Int, _ handler: @escaping RouteHandler) {
        var node = root
        for segment in Self.segments(template) {
            if segment.hasPrefix("{") && segment.hasSuffix("}") && segment.count > 2 {
                let name = String(segment.dropFirst().dropLast())
                if let existing = node.parameter {
                    precondition(existing.name == name,
                                 "\(template): parameter {\(name)} clashes with {\(existing.name)}")
                    node = existing.node
                } else {
                    let child = Node()
                    node.parameter = (name, child)
                    node = child
                }
            } else {
                let literal = PercentDecoding.decode(segment) ?? String(segment)
                if let child = node.literals[literal] { node = child } else {
                    let child = Node()
                    node.literals[literal] = child
                    node.longestLiteral = max(node.longestLiteral, literal.utf8.count)
                    node = child
                }
            }
        }
        node.template = template
        node.handlers[method] = (handler, chain)
        if !template.contains("{") && !template.contains("%") { staticRoutes[template] = node }
        resetResolved()   // a new literal may now win over a parameter

    }

    public func get(_ template: String, _ handler: @escaping RouteHandler) { on(.get, template, handler) }
    public func post(_ template: String, _ handler: @escaping RouteHandler) { on(.post, template, handler) }
    public func put(_ template: String, _ handler: @escaping RouteHandler) { on(.put, template, handler) }
    public func patch(_ template: String, _ handler: @escaping RouteHandler) { on(.patch, template, handler) }
    public func delete(_ template: String, _ handler: @escaping RouteHandler) { on(.delete, template, handler) }

    /// The outcome of looking up a path.
    enum Match {
        case handler(RouteHandler, routing: Request.Routing, chain: Int)
        case methodNotAllowed(allow: String, routing: Request.Routing)
        /// `chain`: the middleware of the path's GET route (else of any of its routes).
        case options(allow: String, routing: Request.Routing, chain: Int)
        case notFound
    }

    /// Paths already resolved: every static template, and paths with parameters seen before
    /// (`/preferences/name` → node, `key=name`). The common request is one hash lookup instead
    /// of splitting, decoding and walking the tree. Bounded: short paths only, and reset to the
    /// static templates when `resolvedLimit` others were added, so odd paths cannot grow it.
    private var resolved = PathTable<(node: Node, routing: Request.Routing)>()
    private static let resolvedLimit = 1_024
    private static let resolvedPathLength = 256

    private func resetResolved() {
        resolved.removeAll()
        for (path, node) in staticRoutes { resolved.set((node, Request.Routing(route: node.template, pairs: [])), for: path) }
    }

    /// Finds the handler for `method` and `path` (percent-encoded, no query).
    func match(_ method: HTTPRequest.Method, path: String) -> Match {
        if let hit = resolved.value(for: path) { return match(method, hit.node, hit.routing) }
        guard path.utf8.first == UInt8(ascii: "/") else { return .notFound }
        var decoded: [String] = []
        for raw in Self.segments(path) {
            guard let segment = PercentDecoding.decode(raw) else { return .notFound }
            decoded.append(segment)
        }
        var parameters: [(String, String)] = []
        guard let node = Self.find(root, decoded[...], &parameters) else { return .notFound }
        let routing = Request.Routing(route: node.template, pairs: parameters.map { (name: $0.0, value: $0.1) })
        if path.utf8.count <= Self.resolvedPathLength {
            if resolved.count >= Self.resolvedLimit + staticRoutes.count { resetResolved() }
            resolved.set((node, routing), for: path)
        }
        return match(method, node, routing)
    }

    private func match(_ method: HTTPRequest.Method, _ node: Node, _ routing: Request.Routing) -> Match {
        if let route = node.handlers[method] ?? (method == .head ? node.handlers[.get] : nil) {
            return .handler(route.handler, routing: routing, chain: route.chain)
        }
        let allow = Self.allow(node)
        guard method == .options else { return .methodNotAllowed(allow: allow, routing: routing) }
        let chain = node.handlers[.get]?.chain
            ?? node.handlers.methods.lazy.compactMap { node.handlers[$0]?.chain }.first ?? 0
        return .options(allow: allow, routing: routing, chain: chain)
    }

    private static func find(_ node: Node, _ rest: ArraySlice<String>,
                             _ parameters: inout [(String, String)]) -> Node? {
        guard let segment = rest.first else { return node.handlers.isEmpty ? nil : node }
        if segment.utf8.count <= node.longestLiteral, let child = node.literals[segment], let found = find(child, rest.dropFirst(), &parameters) {
            return found
        }
        if let (name, child) = node.parameter, !segment.isEmpty {
            parameters.append((name, segment))
            if let found = find(child, rest.dropFirst(), &parameters) { return found }
            parameters.removeLast()
        }
        return nil
    }

    private static func allow(_ node: Node) -> String {
        var methods = Set(node.handlers.methods)
        if methods.contains(.get) { methods.insert(.head) }
        methods.insert(.options)
        return HTTPRequest.Method.served.filter(methods.contains).map(\.rawValue).joined(separator: ", ")
    }

    /// Path segments after the leading `/`; `/` alone is one empty segment... none.
    /// Split on the UTF-8 bytes: `/` is ASCII, so every split point is a character boundary,
    /// and `Character`-based splitting paid for grapheme breaking on every request.
    /// The slashes are found by ``ByteScan`` over the contiguous bytes, not index by index.
    static func segments(_ path: String) -> [Substring] {
        let utf8 = path.utf8
        var copy = path
        let slashes: [Int] = copy.withUTF8 { buffer in
            var offsets: [Int] = []
            var from = 0
            while from < buffer.count,
                  let found = ByteScan.firstOffset(of: UInt8(ascii: "/"), in: UnsafeBufferPointer(rebasing: buffer[from...])) {
                offsets.append(from + found)
                from += found + 1
            }
            return offsets
        }
        var parts: [Substring] = []
        var start = utf8.startIndex
        for offset in slashes {
            let slash = utf8.index(utf8.startIndex, offsetBy: offset)
            parts.append(path[start..<slash])
            start = utf8.index(after: slash)
        }
        parts.append(path[start..<utf8.endIndex])
        if parts.first?.isEmpty == true { parts.removeFirst() }
        if parts.count == 1 && parts[0].isEmpty { return [] }
        return parts
    }
}
