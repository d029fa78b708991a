public import EventHTTP
import HTTPTypes
import Foundation
public import Logging
import TidingsStore

/// The running service, assembled in one place: the HTTP server and its router, the route
/// groups by access rule, the resources (store, state, routes), the router-wide middleware
/// (revision header, CORS, metrics), the operational endpoints, readiness and shutdown.
///
/// Main-actor bound: the event loop runs on the main thread and drains the main queue, so
/// handlers, filters and `@MainActor` state all run on the same thread.
///
/// ```swift
/// let app = try TidingsApplication(configuration: configuration, loop: loop)
/// let port = try app.start()
/// app.markReady()
/// ```
@MainActor
public final class TidingsApplication {
    /// Whether `/readyz` says yes.
    public enum Readiness: String, Sendable {
        case starting, ready, draining
    }

    public let configuration: TidingsConfiguration
    public let loop: EventLoop
    public let server: HTTPServer
    public var logger: Logger
    /// The router (its router-wide middleware: revision, CORS, metrics).
    public var router: Router { server.router }
    /// Where the resources register their routes, by access rule.
    let routes: APIRoutes
    /// The credentials in force (`--api-token`, `--read-token`, `--tokens`).
    let credentials: Credentials
    /// The store, the state and every resource route (set once, during `init`).
    private(set) var resources: TidingsResources!
    public private(set) var readiness: Readiness = .starting
    private var shutdownTasks: [@MainActor () async -> Void] = []
    private var shuttingDown = false

    /// Validators, cache policy and compression for every answer (see `HTTPCaching`); OFREP's
    /// bulk evaluation is a POST that revalidates with `If-None-Match`.
    let caching: HTTPCaching = {
        let caching = HTTPCaching(conditionalPostRoutes: ["/ofrep/v1/evaluate/flags"])
        caching.compressesEventStreams = true
        return caching
    }()

    /// `/healthz` body, encoded once.
    private static let healthy = Response.json(bytes: Array(#"{"status":"ok"}"#.utf8))

    /// Opens the store, loads it, registers every route and middleware. Blocks the calling
    /// thread for the loads (start-up, before the loop runs).
    public init(configuration: TidingsConfiguration, loop: EventLoop,
                logger: Logger = Logger(label: "tidings")) throws {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        server = HTTPServer(loop: loop, configuration: configuration.server, logger: logger)
        // Access-checked route groups and the ticket route (Access/), then the resources.
        credentials = try Credentials(configuration: configuration, logger: logger)
        routes = Self.makeRoutes(configuration: configuration, credentials: credentials, router: server.router)
        resources = try TidingsResources(application: self)
        // Router-wide middleware, in the order it finishes every answer.
        let state = resources.state
        router.add(middleware: RevisionHeader(state: state))
        if let cors = CORSPolicy(origins: configuration.corsOrigins) { router.add(middleware: cors) }
        if let loopback = LoopbackHost(listenHost: configuration.host) { router.add(middleware: loopback) }
        // Validators, Cache-Control, Vary, gzip and the conditional answers (304/412): after
        // the fields above, before the metrics, which count the status it leaves.
        router.add(middleware: caching)
        installMetrics(on: routes)
        registerOperationalRoutes(on: routes)
    }

    private func registerOperationalRoutes(on routes: APIRoutes) {
        routes.open.get("/healthz") { _, responder in responder.send(Self.healthy) }
        routes.open.get("/readyz") { [unowned self] _, responder in
            switch readiness {
            case .ready where !resources.store.isAvailable:
                responder.send(.problem(status: .serviceUnavailable,
                                        detail: "The database cannot be reached; reads are served from memory, writes are refused.",
                                        headers: [.retryAfter: "2"]))
            case .ready:
                responder.send(.json(["status": "ready"]))
            case .starting:
                responder.send(.problem(status: .serviceUnavailable, detail: "The server is starting.",
                                        headers: [.retryAfter: "1"]))
            case .draining:
                responder.send(.problem(status: .serviceUnavailable, detail: "The server is shutting down."))
            }
        }
    }

    /// SIGHUP: reads the `--tokens` file again (a bad file keeps the credentials in force and
    /// logs why). True when the new set is in force.
    @discardableResult
    public func reloadCredentials() -> Bool {
        credentials.reload()
    }

    /// SIGHUP: reads the `--webhooks` file again (a bad file keeps the hooks in force and logs
    /// why). True when the new set is in force.
    @discardableResult
    public func reloadWebhooks() -> Bool {
        resources.webhooks.reload()
    }

    /// Binds and starts serving; returns the bound port. `/readyz` stays 503 until `markReady()`.
    public func start() throws -> Int {
        try server.start()
    }

    /// Marks the service ready (after start-up work such as loading the store).
    public func markReady() {
        if readiness == .starting { readiness = .ready }
    }

    /// Adds work that must finish before the process exits (e.g. flushing the store's pending
    /// writes). Runs after in-flight requests were answered and streams ended, in order.
    public func addShutdownTask(_ task: @escaping @MainActor () async -> Void) {
        shutdownTasks.append(task)
    }

    /// Graceful stop: `/readyz` turns 503, the listener closes, every event stream is ended,
    /// in-flight requests are answered, shutdown tasks run, connections close. `completion`
    /// runs on the main actor at the end. A second call does nothing.
    public func shutdown(completion: @escaping @MainActor () -> Void) {
        guard !shuttingDown else { return }
        shuttingDown = true
        readiness = .draining
        logger.info("shutting down: draining connections and streams")
        server.beginShutdown { [unowned self] in
            Task { @MainActor in
                for task in shutdownTasks { await task() }
                server.close()
                logger.info("shutdown complete")
                completion()
            }
        }
    }
}
