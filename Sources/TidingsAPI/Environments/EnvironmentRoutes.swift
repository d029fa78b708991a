import EventHTTP
import HTTPTypes

/// The route groups a resource registers on, by access rule (``APIRoutes``, or one
/// environment's recorders of them).
protocol RouteGroups {
    var resourceRoutes: any RouteRegistrar { get }
    var streamRoutes: any RouteRegistrar { get }
    var readingPostRoutes: any RouteRegistrar { get }
}

extension APIRoutes: RouteGroups {
    var resourceRoutes: any RouteRegistrar { resources }
    var streamRoutes: any RouteRegistrar { streams }
    var readingPostRoutes: any RouteRegistrar { readingPosts }
}

/// Where the `/environments/{env}` prefix is resolved, once for every path (API.md
/// "Environments"): a resource installed here gets its own handlers for each environment
/// (made by its installer from that environment's state, writes and streams, now and for
/// every environment created later), and every route it registers exists twice on the
/// router — unprefixed, answered by `default`'s handler itself, and under
/// `/environments/{env}`, answered by the named environment's handler (an unknown environment
/// is a 404 naming it). Access (who may reach which environment) is checked before, by the
/// route groups' access check, which reads the same `{env}` parameter.
///
/// ```swift
/// environmentRoutes.install(on: routes) { environment, groups in
///     ThingRoutes(state: environment.state, writes: environment.writes).register(on: groups.resourceRoutes)
/// }
/// ```
@MainActor
final class EnvironmentRoutes {
    /// The prefix every per-environment path also exists under.
    nonisolated static let prefix = "/environments/{env}"
    /// The path parameter naming the environment.
    nonisolated static let parameter = "env"

    typealias Installer = @MainActor (EnvironmentContext, any RouteGroups) -> Void

    let environments: Environments
    /// Routes already on the router, by ``key(_:_:)``.
    private var registered: Set<String> = []

    init(environments: Environments) {
        self.environments = environments
    }

    /// Runs `installer` for every environment, now and whenever one is created, registering
    /// its routes (on `groups`, by access rule) once each.
    func install(on groups: any RouteGroups, _ installer: @escaping Installer) {
        for context in environments.all { run(installer, for: context, on: groups) }
        environments.onCreate.append { [unowned self] context in run(installer, for: context, on: groups) }
    }

    static func key(_ method: HTTPRequest.Method, _ template: String) -> String { method.rawValue + " " + template }

    private func run(_ installer: Installer, for context: EnvironmentContext, on groups: any RouteGroups) {
        installer(context, Recorders(routes: self, context: context, groups: groups))
    }

    /// Records `handler` as `context`'s; the first time a route is seen, registers it on
    /// `group` unprefixed (`default`'s handler, no lookup) and under the prefix (a lookup by name).
    fileprivate func record(_ method: HTTPRequest.Method, _ template: String, _ handler: @escaping RouteHandler,
                            context: EnvironmentContext, group: any RouteRegistrar) {
        let key = Self.key(method, template)
        context.handlers[key] = handler
        guard registered.insert(key).inserted else { return }
        if context === environments.main { group.on(method, template, handler) }
        let environments = self.environments
        group.on(method, Self.prefix + template) { request, responder in
            let name = request.parameter(Self.parameter) ?? ""
            if let handler = environments.context(name)?.handlers[key] { return try handler(request, responder) }
            // Perhaps created through another instance a moment ago: ask the store first.
            environments.knowing([name]) {
                guard let handler = environments.context(name)?.handlers[key] else {
                    return responder.send(.problem(Problems.unknownEnvironment(name)))
                }
                do { try handler(request, responder) } catch { responder.send(.error(error)) }
            }
        }
    }
}

/// One environment's recorders of the route groups.
@MainActor
private struct Recorders: @MainActor RouteGroups {
    let routes: EnvironmentRoutes
    let context: EnvironmentContext
    let groups: any RouteGroups

    var resourceRoutes: any RouteRegistrar { Recorder(routes: routes, context: context, group: groups.resourceRoutes) }
    var streamRoutes: any RouteRegistrar { Recorder(routes: routes, context: context, group: groups.streamRoutes) }
    var readingPostRoutes: any RouteRegistrar { Recorder(routes: routes, context: context, group: groups.readingPostRoutes) }
}

@MainActor
private struct Recorder: @MainActor RouteRegistrar {
    let routes: EnvironmentRoutes
    let context: EnvironmentContext
    let group: any RouteRegistrar

    func on(_ method: HTTPRequest.Method, _ template: String, _ handler: @escaping RouteHandler) {
        routes.record(method, template, handler, context: context, group: group)
    }
}

extension Request {
    /// The environment the request addresses: the `{env}` of an `/environments/{env}/...`
    /// path, else `default`.
    var environmentName: String { parameter(EnvironmentRoutes.parameter) ?? "default" }

    /// `/environments/{env}` when the request came that way, else "" (for links to other pages
    /// of the same environment).
    var environmentPrefix: String {
        guard let name = parameter(EnvironmentRoutes.parameter) else { return "" }
        return "/environments/" + name
    }
}
