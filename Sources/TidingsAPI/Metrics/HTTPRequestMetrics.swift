import HTTPTypes
import Dispatch
import EventHTTP
import Prometheus

/// `tidings_http_requests_total{route,method,status}` and
/// `tidings_http_request_duration_seconds{route}`, recorded by router-wide middleware.
///
/// `route` is the matched template (`/preferences/{key}`), never the raw path, and `unmatched`
/// when no route matched, so the number of series stays bounded by the routes the server
/// declares. Series are resolved once per label set and cached here; the per-request cost is
/// a dictionary lookup by route, one by (method, status), an atomic increment and a histogram
/// record. Durations run from `Request.receivedAt` to the moment the answer (or an event
/// stream's head) is handed to the connection.
///
/// Confined to the event loop thread, where middleware runs.
final class HTTPRequestMetrics: Middleware {
    private final class RouteSeries {
        let route: String
        let duration: ValueHistogram
        var counters: [Int: Prometheus.Counter] = [:]
        /// The counter used last, by its key: most requests repeat the one before.
        var last: (key: Int, counter: Prometheus.Counter)?

        init(route: String, duration: ValueHistogram) {
            self.route = route
            self.duration = duration
        }
    }

    private let registry: PrometheusCollectorRegistry
    private var routes: [String: RouteSeries] = [:]
    /// The series used last: a route template compares equal to it at once (same storage),
    /// where hashing it for the dictionary costs several hundred instructions per request.
    private var lastSeries: RouteSeries?

    static let unmatched = "unmatched"
    private static let requestsHelp = "HTTP requests answered, by route template, method and status."

    init(registry: PrometheusCollectorRegistry) {
        self.registry = registry
    }

    func finish(_ request: Request, _ response: inout Response) {
        record(request, status: response.status.code)
    }

    /// Counts and times one answered request.
    func record(_ request: Request, status: Int) {
        let route = request.route ?? Self.unmatched
        let series: RouteSeries
        if let last = lastSeries, last.route == route {
            series = last
        } else {
            series = routes[route] ?? makeSeries(route)
            lastSeries = series
        }
        let status = min(max(status, 0), 999)
        let key = (request.method.servedIndex ?? HTTPRequest.Method.served.count) &* 1_000 &+ status
        let counter: Prometheus.Counter
        if let last = series.last, last.key == key {
            counter = last.counter
        } else {
            counter = series.counters[key] ?? makeCounter(series, method: request.method, status: status, key: key)
            series.last = (key, counter)
        }
        counter.increment()
        let now = DispatchTime.now().uptimeNanoseconds
        let elapsed = now >= request.receivedAt && request.receivedAt != 0 ? now - request.receivedAt : 0
        series.duration.record(Double(elapsed) * 1e-9)
    }

    private func makeSeries(_ route: String) -> RouteSeries {
        let histogram = registry.makeValueHistogram(
            descriptor: TidingsMetrics.name("http_request_duration", unit: "seconds",
                                            help: "Time from a request's arrival to its answer (event streams: to the stream's head)."),
            labels: [("route", route)], buckets: TidingsMetrics.latencyBuckets)
        let series = RouteSeries(route: route, duration: histogram)
        routes[route] = series
        return series
    }

    private func makeCounter(_ series: RouteSeries, method: HTTPRequest.Method, status: Int, key: Int) -> Prometheus.Counter {
        let counter = registry.makeCounter(
            descriptor: TidingsMetrics.name("http_requests", unit: "total", help: Self.requestsHelp),
            labels: [("route", series.route), ("method", method.rawValue), ("status", String(status))])
        series.counters[key] = counter
        return counter
    }

}
