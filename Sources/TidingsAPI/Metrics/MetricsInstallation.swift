import HTTPTypes
import EventHTTP

@MainActor
extension TidingsApplication {
    /// Installs `GET /metrics` (a read) and the per-request metrics as router-wide middleware
    /// (every answer is counted), and bootstraps swift-metrics onto the same registry. Call
    /// once (the middleware only reads the status, so its position does not change what it records).
    func installMetrics(_ metrics: TidingsMetrics = .shared, on routes: APIRoutes) {
        MetricsBootstrap.run()
        let requests = HTTPRequestMetrics(registry: metrics.registry)
        router.add(middleware: requests)
        let server = self.server
        let environments = resources.environments
        routes.resources.get("/metrics") { [caching] _, responder in
            responder.send(Response(status: .ok,
                                    headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8",
                                              .cacheControl: "no-store"],
                                    body: metrics.exposition() + requests.exposition()
                                        + ProcessMetrics.exposition(server: server)
                                        + CompressionMetrics.exposition(caching: caching, streams: server.streamCompression)
                                        + EnvironmentMetrics.exposition(environments)))
        }
    }
}
