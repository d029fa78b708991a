import EventHTTP

@MainActor
extension TidingsApplication {
    /// Installs `GET /metrics` and the per-request metrics filter, and bootstraps swift-metrics
    /// onto the same registry. Call once, after the other response filters (the filter only
    /// reads the status, so its position does not change what it records).
    func installMetrics(_ metrics: TidingsMetrics = .shared) {
        MetricsBootstrap.run()
        let requests = HTTPRequestMetrics(registry: metrics.registry)
        router.addResponseFilter { request, response in
            requests.record(request, status: response.status)
        }
        router.get("/metrics") { _, responder in
            responder.send(Response(status: 200,
                                    headers: ["Content-Type": "text/plain; version=0.0.4; charset=utf-8",
                                              "Cache-Control": "no-store"],
                                    body: metrics.exposition()))
        }
    }
}
