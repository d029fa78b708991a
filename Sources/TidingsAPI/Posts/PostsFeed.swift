import EventHTTP
import HTTPTypes
import Foundation
import Logging
import Observing
import TidingsStore

/// The posts resource's model, as the routes see it: the stored document answers
/// (``PostsWaiters``, ``ServedPosts``), and the ``PostsCycle`` that loads the feed and stores
/// what it shows — made at first use, when the source URL can be known (``FeedSource``).
///
/// Confined to the main actor (the event loop).
@MainActor
final class PostsFeed {
    private let configuration: TidingsConfiguration
    private let client: any HTTPClient
    private let logger: Logger
    private let meter: UpstreamFetchMeter
    private let state: TidingsState
    private let writes: WritePipeline
    private let source: FeedSource
    private let waiters: PostsWaiters
    private var cycleStorage: PostsCycle?
    private var shutDown = false
    private var index: (fetchedAt: Date, ids: [String: Int])?
    /// Takes the cluster's fetch lease of the feed at this URL for this instance (true: fetch
    /// upstream).
    var fetchLease: @Sendable (_ source: String) async -> Bool = { _ in true }
    /// The cluster's one-fetch-at-a-time lease of the feed at this URL.
    var loadLease: @Sendable (_ source: String) -> PostsLoadLease = { _ in .alone }
    /// Returns once this instance has applied a revision (the change feed's).
    var catchUp: @MainActor (UInt64) async -> Void = { _ in }
    /// Returns once a read of the store started after the call is applied (the change feed's).
    var caughtUp: @MainActor () async -> Void = {}

    /// - Parameters:
    ///   - boundPort: the server's port once started (for the default sample feed URL).
    ///   - isDraining: true once shutdown began (waiting requests are then answered at once).
    ///   - client: the upstream client.
    init(configuration: TidingsConfiguration, state: TidingsState, writes: WritePipeline,
         client: any HTTPClient = CurlHTTPClient(),
         boundPort: @escaping @MainActor () -> Int, isDraining: @escaping @MainActor () -> Bool,
         logger: Logger) {
        self.configuration = configuration
        self.client = client
        self.logger = logger
        self.state = state
        self.writes = writes
        meter = UpstreamFetchMeter(logger: logger)
        source = FeedSource(configuration: configuration, boundPort: boundPort)
        state.postsSource = source
        waiters = PostsWaiters(served: ServedPosts(state: state), isDraining: isDraining)
    }

    /// The upstream policy from the flags: `--feed-timeout`, 8 MiB, back-off 1 s doubling up
    /// to 60 s, `--feed-refresh` (0 = never). The cycle schedules retries and refreshes.
    static func policy(_ configuration: TidingsConfiguration) -> DataLoaderPolicy {
        DataLoaderPolicy(timeout: .seconds(configuration.feedTimeout), maxBodyBytes: 8 << 20,
                         retryBase: .seconds(1), retryCap: .seconds(60),
                         refreshInterval: configuration.feedRefresh > 0 ? .seconds(configuration.feedRefresh) : nil)
    }

    /// The cycle, made at first use, when the source URL can be known.
    var cycle: PostsCycle? {
        if shutDown { return nil }
        if let cycleStorage { return cycleStorage }
        let policy = Self.policy(configuration)
        // The leases are the feed's: instances of another `--feed-url` never wait on this one.
        let url = source.text
        let fetchLease = self.fetchLease
        var parts = PostsCycle.Parts(state: state, writes: writes, source: source, waiters: waiters, policy: policy,
                                     fetchLease: { await fetchLease(url) }, loadLease: loadLease(url),
                                     catchUp: catchUp, logger: logger)
        parts.caughtUp = caughtUp
        let cycle = PostsCycle(parts, upstream: MeteredHTTPClient(base: client, meter: meter)) { client in
            PostsLoader.make(source: source, configuration: configuration, client: client, meter: meter, policy: policy)
        }
        cycleStorage = cycle
        return cycle
    }

    /// Sends how each upstream fetch ended (`success`, `not_modified`, `connection_error`,
    /// `timeout`, `http_error`, `too_large`, `invalid_body`, `cancelled`) to `report`, from any
    /// thread — e.g. `TidingsMetrics.shared.recordUpstreamFetch(outcome:)`.
    func reportFetches(to report: @escaping @Sendable (String) -> Void) {
        meter.setReporter(report)
    }

    /// The first reader's duty: start the load when nothing was loaded or tried yet.
    func fetchIfNeeded() { cycle?.read() }

    /// Starts a load, or joins the running one (`POST /posts/refresh`).
    func refresh() { cycle?.refresh() }

    /// Abandons the running load; false when none was running.
    func cancel() -> Bool { cycleStorage?.cancel() ?? false }

    // MARK: Answers

    /// Answers `responder` with the stored state once it is stored; with `seconds` > 0, once
    /// the running visible load ended too, or after `seconds`. Never blocks the loop.
    func answer(_ responder: Responder, status: HTTPResponse.Status = .ok, within seconds: Double = 0) {
        waiters.answer(responder, status: status, within: seconds)
    }

    /// The phase this instance shows (for a lookup's 404 message).
    var phase: LoadPhase { cycleStorage?.shownState.phase ?? .idle }

    /// Whether posts are held to look up.
    var holdsPosts: Bool { cycleStorage?.held != nil }

    /// The post whose id, in its string form, is `id`, from the posts held: this instance's
    /// fetch or the stored document it took.
    func post(id: String) -> Post? {
        guard let held = cycleStorage?.held else { return nil }
        if index?.fetchedAt != held.fetchedAt {
            var ids: [String: Int] = [:]
            for (position, post) in held.value.posts.enumerated() where ids[post.id.pathForm] == nil {
                ids[post.id.pathForm] = position
            }
            index = (held.fetchedAt, ids)
        }
        return index?.ids[id].map { held.value.posts[$0] }
    }

    // MARK: Shutdown

    /// Cancels the running load and every scheduled retry or refresh, answers waiting
    /// requests, and stores nothing more. Nothing of the feed keeps the process alive. Returns
    /// once the cluster's load lease, if this instance had it, is given back — before the
    /// store closes (the shutdown tasks after this one), so a restart finds it free.
    func shutdown() async {
        guard !shutDown else { return }
        shutDown = true
        let cycle = cycleStorage
        cycle?.stop()
        waiters.answerAll()
        // Releasing the cycle releases the loader (its deinit cancels what it runs).
        cycleStorage = nil
        await cycle?.leaseReleased()
    }
}
