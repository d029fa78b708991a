public import EventHTTP
import HTTPTypes
import Foundation
public import Logging

/// The running service: owns the HTTP server and its router, the operational endpoints, the
/// revision header, readiness, and the shutdown sequence.
///
/// Main-actor bound: the event loop runs on the main thread and drains the main queue, so
/// handlers, filters and `@MainActor` state all run on the same thread.
///
/// ```swift
/// let app = try TidingsApplication(configuration: configuration, loop: loop)
/// app.router.get("/things") { request, responder in responder.send(.json(...)) }
/// app.revisionProvider = { store.revision }
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
    private(set) var routes: APIRoutes!
    /// The global revision every response reports in `Tidings-Revision` (default 0).
    public var revisionProvider: () -> UInt64 = { 0 }
    /// Whether the store can take writes now; `/readyz` is 503 while it cannot.
    public var storeAvailability: () -> Bool = { true }
    public private(set) var readiness: Readiness = .starting
    private var shutdownTasks: [@MainActor () async -> Void] = []
    private var shuttingDown = false

    /// `/healthz` body, encoded once.
    private static let healthy = Response.json(bytes: Array(#"{"status":"ok"}"#.utf8))

    public init(configuration: TidingsConfiguration, loop: EventLoop,
                logger: Logger = Logger(label: "tidings")) {
        self.configuration = configuration
        self.loop = loop
        self.logger = logger
        server = HTTPServer(loop: loop, configuration: configuration.server, logger: logger)
        router.add(middleware: RevisionHeader { [unowned self] in revisionProvider() })
        // Access-checked route groups + CORS (Access/), request metrics + GET /metrics (Metrics/).
        let routes = installAccessControl()
        self.routes = routes
        installMetrics(on: routes)
        registerOperationalRoutes(on: routes)
    }

    private func registerOperationalRoutes(on routes: APIRoutes) {
        routes.open.get("/healthz") { _, responder in responder.send(Self.healthy) }
        routes.open.get("/readyz") { [unowned self] _, responder in
            switch readiness {
            case .ready where !storeAvailability():
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
