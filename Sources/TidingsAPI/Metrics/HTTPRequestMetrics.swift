import HTTPTypes
import Dispatch
import EventHTTP
import Prometheus

/// `tidings_http_requests_total{route,method,status}` and
/// `tidings_http_request_duration_seconds{route}`, recorded by router-wide middleware.
///
/// `route` is the matched template (`/preferences/{key}`), never the raw path, and `unmatched`
/// when no route matched, so the number of series stays bounded by the routes the server
/// declares. Series are resolved once per label set and cached here. Durations run from
/// `Request.receivedAt` to the moment the answer (or an event stream's head) is handed to the
/// connection.
///
/// The duration histogram is kept here, not in the Prometheus registry: the middleware runs on
/// the loop thread only, so a bucket is a plain integer increment, where the registry's
/// histogram took a lock and converted to seconds on every request (about 0.4K instructions).
/// `exposition()` renders it in the registry's text format; `/metrics` appends it.
///
/// Confined to the event loop thread, where middleware runs.
final class HTTPRequestMetrics: Middleware {
    private final class RouteSeries {
        let route: String
        var duration = DurationHistogram()
        var counters: [Int: Prometheus.Counter] = [:]
        /// The counter used last, by its key: most requests repeat the one before.
        var last: (key: Int, counter: Prometheus.Counter)?

        init(route: String) { self.route = route }
    }

    private let registry: PrometheusCollectorRegistry
    private var routes: [String: RouteSeries] = [:]
    /// Series in the order they were first used: the order `exposition()` lists them.
    private var ordered: [RouteSeries] = []
    /// The series used last: a route template compares equal to it at once (same storage),
    /// where hashing it for the dictionary costs several hundred instructions per request.
    private var lastSeries: RouteSeries?

    static let unmatched = "unmatched"
    static let durationName = "tidings_http_request_duration_seconds"
    private static let requestsHelp = "HTTP requests answered, by route template, method and status."
    private static let durationHelp = "Time from a request's arrival to its answer (event streams: to the stream's head)."

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
        series.duration.record(nanoseconds: now >= request.receivedAt && request.receivedAt != 0 ? now - request.receivedAt : 0)
    }

    /// The duration histogram in the Prometheus text format (0.0.4), every route seen so far.
    func exposition() -> [UInt8] {
        guard !ordered.isEmpty else { return [] }
        var text = "# HELP \(Self.durationName) \(Self.durationHelp)\n# TYPE \(Self.durationName) histogram\n"
        for series in ordered { series.duration.render(name: Self.durationName, route: series.route, into: &text) }
        return Array(text.utf8)
    }

    private func makeSeries(_ route: String) -> RouteSeries {
        let series = RouteSeries(route: route)
        routes[route] = series
        ordered.append(series)
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

/// A latency histogram over `TidingsMetrics.latencyBuckets`, counted in whole nanoseconds.
/// Not thread-safe: its owner keeps it on one thread.
struct DurationHistogram {
    /// The bucket bounds in nanoseconds, and as the `le` label writes them.
    private static let bounds: [UInt64] = TidingsMetrics.latencyBuckets.map { UInt64(($0 * 1e9).rounded()) }
    private static let labels: [String] = TidingsMetrics.latencyBuckets.map { "\($0)" }

    /// Observations per bucket, not cumulative; the last slot is beyond every bound (`+Inf` only).
    private var counts = [UInt64](repeating: 0, count: bounds.count + 1)
    private(set) var count: UInt64 = 0
    private(set) var sumNanoseconds: UInt64 = 0

    mutating func record(nanoseconds: UInt64) {
        var slot = 0
        let bounds = Self.bounds
        while slot < bounds.count, nanoseconds > bounds[slot] { slot += 1 }
        counts[slot] &+= 1
        count &+= 1
        sumNanoseconds &+= nanoseconds
    }

    func render(name: String, route: String, into text: inout String) {
        let labels = "route=\"\(route)\""
        var running: UInt64 = 0
        for (index, le) in Self.labels.enumerated() {
            running &+= counts[index]
            text += "\(name)_bucket{\(labels),le=\"\(le)\"} \(running)\n"
        }
        text += "\(name)_bucket{\(labels),le=\"+Inf\"} \(count)\n"
        text += "\(name)_sum{\(labels)} \(Double(sumNanoseconds) / 1e9)\n"
        text += "\(name)_count{\(labels)} \(count)\n"
    }
}
