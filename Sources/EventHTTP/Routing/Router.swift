/// A route handler: reads the request, answers through the responder now or later (on the loop
/// thread, exactly once). A thrown error is answered as `Response.error(_:)` if nothing was sent.
public typealias RouteHandler = (Request, Responder) throws -> Void

/// Maps method + path template to handlers, and runs the filters every request and response
/// pass through.
///
/// Templates are literal segments and `{name}` parameters: `/preferences/{key}`. A literal
/// segment wins over a parameter at the same position (`/preferences/events` beats
/// `/preferences/{key}`), with backtracking, so both stay reachable. Parameters are
/// percent-decoded. `HEAD` is served by the `GET` handler (no body sent), `OPTIONS` answers 204
/// with `Allow`, an unknown path answers 404 and a known path with another method 405 with
/// `Allow`, all as problem details.
///
/// Loop-thread confined: register routes before `HTTPServer.start()` or on the loop thread.
///
/// ```swift
/// router.get("/preferences/{key}") { request, responder in
///     responder.send(.json(store.record(request.parameters["key"]!)))
/// }
/// ```
public final class Router {
    final class Node {
        var literals: [String: Node] = [:]
        var parameter: (name: String, node: Node)?
        var handlers: [HTTPMethod: RouteHandler] = [:]
        var template = ""
    }

    private let root = Node()
    /// Templates without parameters, by their exact path: the common request (`/healthz`,
    /// `/preferences`) is found with one hash lookup instead of splitting and walking the tree.
    /// Only a path spelled exactly like the template hits; anything else (percent-encoded,
    /// a parameter) takes the tree, which gives the same node.
    private var staticRoutes: [String: Node] = [:]
    private var requestFilters: [(Request) -> Response?] = []
    private(set) var responseFilters: [(Request, inout Response) -> Void] = []

    public init() {}

    /// Registers `handler` for `method` on `template`; a second registration replaces the first.
    public func on(_ method: HTTPMethod, _ template: String, _ handler: @escaping RouteHandler) {
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
                    node = child
                }
            }
        }
        node.template = template
        node.handlers[method] = handler
        resolved.removeAll()   // a new literal may now win over a parameter
        if !template.contains("{") && !template.contains("%") { staticRoutes[template] = node }
    }

    public func get(_ template: String, _ handler: @escaping RouteHandler) { on(.GET, template, handler) }
    public func post(_ template: String, _ handler: @escaping RouteHandler) { on(.POST, template, handler) }
    public func put(_ template: String, _ handler: @escaping RouteHandler) { on(.PUT, template, handler) }
    public func patch(_ template: String, _ handler: @escaping RouteHandler) { on(.PATCH, template, handler) }
    public func delete(_ template: String, _ handler: @escaping RouteHandler) { on(.DELETE, template, handler) }

    /// Adds a filter run on every request whose path and method found a route (a handler or the
    /// built-in `OPTIONS` answer), in order of registration, after the lookup and before the
    /// handler: `request.route` and `request.parameters` are filled in. Unknown paths (404) and
    /// methods (405) are answered by routing first, so a filter never hides them. Return a
    /// response to answer at once (e.g. 401), nil to continue.
    public func addRequestFilter(_ filter: @escaping (Request) -> Response?) {
        requestFilters.append(filter)
    }

    /// Adds a filter run on every response before it is sent: routed answers, 404/405/OPTIONS,
    /// filter answers, and the head of event streams (its body is empty there). Use it for
    /// CORS headers, a revision header, metrics (`request.route`, `request.receivedAt`).
    public func addResponseFilter(_ filter: @escaping (Request, inout Response) -> Void) {
        responseFilters.append(filter)
    }

    /// The outcome of looking up a path.
    enum Match {
        case handler(RouteHandler, parameters: [String: String], template: String)
        case methodNotAllowed(allow: String, template: String)
        case options(allow: String, template: String)
        case notFound
    }

    /// Paths with parameters already resolved (`/preferences/name` → node, `key=name`): the
    /// common request is one hash lookup instead of splitting, decoding and walking the tree.
    /// Bounded: short paths only, and emptied when full, so odd paths cannot grow it.
    private var resolved: [String: (node: Node, parameters: [String: String])] = [:]
    private static let resolvedLimit = 1_024
    private static let resolvedPathLength = 256

    /// Finds the handler for `method` and `path` (percent-encoded, no query).
    func match(_ method: HTTPMethod, path: String) -> Match {
        if let node = staticRoutes[path] { return match(method, node, parameters: [:]) }
        if let hit = resolved[path] { return match(method, hit.node, parameters: hit.parameters) }
        guard path.utf8.first == UInt8(ascii: "/") else { return .notFound }
        var decoded: [String] = []
        for raw in Self.segments(path) {
            guard let segment = PercentDecoding.decode(raw) else { return .notFound }
            decoded.append(segment)
        }
        var parameters: [(String, String)] = []
        guard let node = Self.find(root, decoded[...], &parameters) else { return .notFound }
        var dictionary: [String: String] = [:]
        for (name, value) in parameters { dictionary[name] = value }
        if path.utf8.count <= Self.resolvedPathLength {
            if resolved.count >= Self.resolvedLimit { resolved.removeAll(keepingCapacity: true) }
            resolved[path] = (node, dictionary)
        }
        return match(method, node, parameters: dictionary)
    }

    private func match(_ method: HTTPMethod, _ node: Node, parameters: [String: String]) -> Match {
        let template = node.template
        if let handler = node.handlers[method] ?? (method == .HEAD ? node.handlers[.GET] : nil) {
            return .handler(handler, parameters: parameters, template: template)
        }
        let allow = Self.allow(node)
        return method == .OPTIONS ? .options(allow: allow, template: template)
                                  : .methodNotAllowed(allow: allow, template: template)
    }

    private static func find(_ node: Node, _ rest: ArraySlice<String>,
                             _ parameters: inout [(String, String)]) -> Node? {
        guard let segment = rest.first else { return node.handlers.isEmpty ? nil : node }
        if let child = node.literals[segment], let found = find(child, rest.dropFirst(), &parameters) {
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
        var methods = Set(node.handlers.keys)
        if methods.contains(.GET) { methods.insert(.HEAD) }
        methods.insert(.OPTIONS)
        return HTTPMethod.allCases.filter(methods.contains).map(\.rawValue).joined(separator: ", ")
    }

    /// Path segments after the leading `/`; `/` alone is one empty segment... none.
    /// Split on the UTF-8 bytes: `/` is ASCII, so every split point is a character boundary,
    /// and `Character`-based splitting paid for grapheme breaking on every request.
    static func segments(_ path: String) -> [Substring] {
        let utf8 = path.utf8
        var parts: [Substring] = []
        var start = utf8.startIndex
        var index = start
        while index != utf8.endIndex {
            if utf8[index] == UInt8(ascii: "/") {
                parts.append(path[start..<index])
                start = utf8.index(after: index)
            }
            index = utf8.index(after: index)
        }
        parts.append(path[start..<utf8.endIndex])
        if parts.first?.isEmpty == true { parts.removeFirst() }
        if parts.count == 1 && parts[0].isEmpty { return [] }
        return parts
    }

    /// Runs filters, routing, and the built-in answers for one request. `bodyLimitExceeded`
    /// (the limit, when the body is over it) is answered 413 once the route was found and the
    /// request filters passed, so 404/405 and credential answers come first.
    func handle(_ request: Request, _ responder: Responder, bodyLimitExceeded: Int? = nil) {
        var request = request
        let found = match(request.method, path: request.path)
        switch found {
        case .handler(_, let parameters, let template):
            request.parameters = parameters
            request.route = template
        case .options(_, let template), .methodNotAllowed(_, let template):
            request.route = template
        case .notFound:
            break
        }
        responder.request = request
        switch found {
        case .handler, .options: if runRequestFilters(request, responder) { return }
        case .methodNotAllowed, .notFound: break
        }
        if let limit = bodyLimitExceeded, case .handler = found {
            responder.send(.problem(status: 413, detail: "The request body is larger than \(limit) bytes."))
            return
        }
        switch found {
        case .handler(let handler, _, _):
            do {
                try handler(request, responder)
            } catch {
                if !responder.isCompleted { responder.send(.error(error)) }
            }
        case .options(let allow, _):
            responder.send(Response(status: 204, headers: ["Allow": allow]))
        case .methodNotAllowed(let allow, _):
            responder.send(.problem(status: 405, detail: "\(request.method.rawValue) is not allowed here; allowed: \(allow).",
                                    headers: ["Allow": allow]))
        case .notFound:
            responder.send(.problem(status: 404, detail: "No resource at \(Self.printable(request.path))."))
        }
    }

    /// Runs the request filters; true when one of them answered.
    private func runRequestFilters(_ request: Request, _ responder: Responder) -> Bool {
        for filter in requestFilters {
            if let response = filter(request) {
                responder.send(response)
                return true
            }
        }
        return false
    }

    /// The path as text safe to echo in a problem's detail (bounded length).
    private static func printable(_ path: String) -> String {
        path.count > 200 ? String(path.prefix(200)) + "…" : path
    }
}
