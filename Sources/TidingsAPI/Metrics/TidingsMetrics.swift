import CoreMetrics
public import Prometheus

/// How one upstream (posts feed) fetch ended; the `outcome` label of
/// `tidings_upstream_fetches_total`.
public enum UpstreamFetchOutcome: String, Sendable, CaseIterable {
    /// 2xx with a valid JSON array of posts.
    case success
    /// 304: the cached posts stay.
    case notModified = "not_modified"
    /// Could not connect / the connection broke.
    case connectionError = "connection_error"
    /// No complete answer within `--feed-timeout`.
    case timeout
    /// A non-2xx (other than 304) status.
    case httpError = "http_error"
    /// The body passed the size limit (8 MiB).
    case tooLarge = "too_large"
    /// Not a JSON array of posts.
    case invalidBody = "invalid_body"
    /// Abandoned by `POST /posts/cancel` or shutdown.
    case cancelled
}

/// The process's Prometheus metrics (openapi.yaml "Operations", `GET /metrics`).
///
/// One registry per process (`shared`); every series is created up front or once per label
/// set and then only incremented — atomics, no locks except a histogram's own short one — so
/// recording costs nanoseconds and is safe from any thread. The same registry backs the
/// swift-metrics facade (`MetricsSystem`), bootstrapped once by `bootstrapMetricsSystem()`, so
/// `Metrics.Counter(label:)` anywhere in the process also lands in `/metrics`.
///
/// ```swift
/// TidingsMetrics.shared.recordUpstreamFetch(outcome: .success)   // from the posts feed
/// ```
public final class TidingsMetrics: Sendable {
    /// The process-wide instance that `/metrics` exports.
    public static let shared = TidingsMetrics()

    /// Where every series lives; `emitToBuffer()` is the `/metrics` body.
    public let registry: PrometheusCollectorRegistry
    private let openStreams: Prometheus.Gauge
    private let storeWriteDuration: ValueHistogram
    private let upstreamFetches: [UpstreamFetchOutcome: Prometheus.Counter]
    private let otherUpstreamFetches: Prometheus.Counter
    private let eventsPublished: [String: Prometheus.Counter]

    /// Latency buckets (seconds) shared by the request and store-write histograms.
    static let latencyBuckets: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]
    /// The `topic` label values of `tidings_events_published_total`.
    static let topics = ["preferences", "things", "posts"]

    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        openStreams = registry.makeGauge(descriptor: Self.name("open_streams", help: "Event streams currently open."))
        storeWriteDuration = registry.makeValueHistogram(
            descriptor: Self.name("store_write_duration", unit: "seconds",
                                  help: "Time the durable store took to commit one group of writes."),
            buckets: Self.latencyBuckets)
        let fetchHelp = "Upstream posts feed fetches by how they ended."
        var fetches: [UpstreamFetchOutcome: Prometheus.Counter] = [:]
        for outcome in UpstreamFetchOutcome.allCases {
            fetches[outcome] = registry.makeCounter(descriptor: Self.name("upstream_fetches", unit: "total", help: fetchHelp),
                                                    labels: [("outcome", outcome.rawValue)])
        }
        upstreamFetches = fetches
        otherUpstreamFetches = registry.makeCounter(descriptor: Self.name("upstream_fetches", unit: "total", help: fetchHelp),
                                                    labels: [("outcome", "other")])
        var events: [String: Prometheus.Counter] = [:]
        for topic in Self.topics {
            events[topic] = registry.makeCounter(
                descriptor: Self.name("events_published", unit: "total",
                                      help: "Change events announced to event streams, by topic."),
                labels: [("topic", topic)])
        }
        eventsPublished = events
    }

    /// `tidings_<metricName>_<unit>` with its help text.
    static func name(_ metricName: String, unit: String = "", help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "tidings", metricName: metricName, unitName: unit, helpText: help)
    }

    // MARK: Recording (any thread)

    /// Counts one upstream fetch of the posts feed.
    public func recordUpstreamFetch(outcome: UpstreamFetchOutcome) {
        upstreamFetches[outcome]?.increment()
    }

    /// Counts one upstream fetch by the outcome's label text (`"success"`, `"timeout"`, ... as
    /// in `UpstreamFetchOutcome`); any other text counts as `other`, so a caller can never blow
    /// up the label's cardinality.
    public func recordUpstreamFetch(outcome: String) {
        if let known = UpstreamFetchOutcome(rawValue: outcome) {
            recordUpstreamFetch(outcome: known)
        } else {
            otherUpstreamFetches.increment()
        }
    }

    /// Counts one announced change event on `topic` (`preferences`, `things`, `posts`).
    func recordEventPublished(topic: String) {
        eventsPublished[topic]?.increment()
    }

    /// Records one store commit's duration.
    func recordStoreWrite(seconds: Double) {
        storeWriteDuration.record(max(0, seconds))
    }

    /// Sets the number of open event streams.
    func setOpenStreams(_ count: Int) {
        openStreams.set(to: Double(count))
    }

    /// The Prometheus text exposition (format 0.0.4).
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}

/// Bootstraps swift-metrics onto `TidingsMetrics.shared`'s registry, once per process.
enum MetricsBootstrap {
    @MainActor private static var done = false

    @MainActor static func run() {
        guard !done else { return }
        done = true
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: TidingsMetrics.shared.registry))
    }
}
