import EventHTTP
import HTTPTypes
import Foundation
import Logging
import Observing
import OpenCombine
import TidingsStore

/// The posts resource's model. One way round, no circle:
///
/// 1. a `DataLoader<FetchedPosts>` (``PostsLoader``) loads the upstream feed, off the loop;
/// 2. each of its states goes to the ``PostsDocumentWriter``, which stores the `GET /posts`
///    object for it through the write pipeline (unless the stored document shows it already);
/// 3. the stored document comes back through the one ordered change path, like another
///    instance's: it *is* the feed's state. `GET /posts`, `?wait=`, the `ETag`, the `posts`
///    events and every instance serve it (``ServedPosts``, ``PostsWaiters``); the feed keeps
///    no copy of it.
///
/// Another instance's documents also reach this instance's loader (``StoredPostsAdoption``),
/// so it refreshes from the newest posts and a load that joined another's ends with it.
///
/// The loader is made at first use, when the source URL can be known (``FeedSource``).
/// Confined to the main actor (the event loop): the loader's request and decoding run off it,
/// their outcome comes back with `await`.
@MainActor
final class PostsFeed {
    private let configuration: TidingsConfiguration
    private let client: any HTTPClient
    private let logger: Logger
    private let meter: UpstreamFetchMeter
    private let state: TidingsState
    private let source: FeedSource
    private let gate = RefreshGate()
    private let waiters: PostsWaiters
    private let writer: PostsDocumentWriter
    private var loaderStorage: DataLoader<FetchedPosts>?
    private var adoption: StoredPostsAdoption?
    private var subscription: AnyCancellable?
    private var shutDown = false
    private var index: (fetchedAt: Date, ids: [String: Int])?
    /// Takes the cluster's fetch lease for this instance (true: fetch upstream).
    var fetchLease: @Sendable () async -> Bool = { true }
    /// The cluster's one-fetch-at-a-time lease (see ``ClusterFeedClient``).
    var loadLease = PostsLoadLease.alone

    /// - Parameters:
    ///   - boundPort: the server's port once started (for the default sample feed URL).
    ///   - isDraining: true once shutdown began (waiting requests are then answered at once).
    ///   - client: the upstream client put into the loader's environment.
    init(configuration: TidingsConfiguration, state: TidingsState, writes: WritePipeline,
         client: any HTTPClient = CurlHTTPClient(),
         boundPort: @escaping @MainActor () -> Int, isDraining: @escaping @MainActor () -> Bool,
         logger: Logger) {
        self.configuration = configuration
        self.client = client
        self.logger = logger
        self.state = state
        meter = UpstreamFetchMeter(logger: logger)
        source = FeedSource(configuration: configuration, boundPort: boundPort)
        state.postsSource = source
        waiters = PostsWaiters(served: ServedPosts(state: state), isDraining: isDraining)
        writer = PostsDocumentWriter(state: state, writes: writes, source: source, waiters: waiters,
                                     timeout: Self.policy(configuration).timeout, logger: logger)
    }

    /// The upstream policy from the flags: `--feed-timeout`, 8 MiB, back-off 1 s doubling up
    /// to 60 s, `--feed-refresh` (0 = never).
    static func policy(_ configuration: TidingsConfiguration) -> DataLoaderPolicy {
        DataLoaderPolicy(timeout: .seconds(configuration.feedTimeout), maxBodyBytes: 8 << 20,
                         retryBase: .seconds(1), retryCap: .seconds(60),
                         refreshInterval: configuration.feedRefresh > 0 ? .seconds(configuration.feedRefresh) : nil)
    }

    // MARK: Loader

    /// Created at first use, when the source URL can be known.
    private var loader: DataLoader<FetchedPosts>? {
        if shutDown { return nil }
        if let loaderStorage { return loaderStorage }
        let loader = PostsLoader.make(.init(source: source, configuration: configuration, client: client, meter: meter,
                                            gate: gate, fetchLease: fetchLease, loadLease: loadLease,
                                            policy: Self.policy(configuration)))
        loaderStorage = loader
        subscription = loader.$state.dropFirst().sink { [weak self] newState in self?.loaderDidChange(newState) }
        adoption = StoredPostsAdoption(state: state, loader: loader, writer: writer, gate: gate)
        return loader
    }

    private func loaderDidChange(_ newState: LoadState<FetchedPosts>) {
        gate.setHoldsContent(newState.lastGood != nil)
        if let error = newState.error {
            logger.notice("posts feed failed: \(PostsStateBody.message(error, timeout: Self.policy(configuration).timeout))")
        }
        writer.loaderDidChange(newState)
        adoption?.loaderDidChange(newState)
    }

    /// Sends how each upstream fetch ended (`success`, `not_modified`, `connection_error`,
    /// `timeout`, `http_error`, `too_large`, `invalid_body`, `cancelled`) to `report`, from any
    /// thread — e.g. `TidingsMetrics.shared.recordUpstreamFetch(outcome:)`.
    func reportFetches(to report: @escaping @Sendable (String) -> Void) {
        meter.setReporter(report)
    }

    /// The first reader's duty: start the load when nothing was loaded or tried yet.
    func fetchIfNeeded() { loader?.fetchDataIfNeeded() }

    /// Starts a load, or joins the running one (`POST /posts/refresh`).
    func refresh() {
        gate.markRequested()
        loader?.refresh()
    }

    /// Abandons the running load; false when none was running.
    func cancel() -> Bool { loaderStorage?.cancel() ?? false }

    // MARK: Answers

    /// Answers `responder` with the stored state once it is stored; with `seconds` > 0, once
    /// the running visible load ended too, or after `seconds`. Never blocks the loop.
    func answer(_ responder: Responder, status: HTTPResponse.Status = .ok, within seconds: Double = 0) {
        waiters.answer(responder, status: status, within: seconds)
    }

    /// The phase of the loader (for a lookup's 404 message).
    var phase: LoadPhase { loaderStorage?.state.phase ?? .idle }

    /// Whether posts are held to look up.
    var holdsPosts: Bool { loaderStorage?.state.lastGood != nil }

    /// The post whose id, in its string form, is `id`, from the posts the loader holds: this
    /// instance's fetch or the stored document it took.
    func post(id: String) -> Post? {
        guard let loaded = loaderStorage?.state.lastGood else { return nil }
        if index?.fetchedAt != loaded.fetchedAt {
            var ids: [String: Int] = [:]
            for (position, post) in loaded.value.posts.enumerated() where ids[post.id.pathForm] == nil {
                ids[post.id.pathForm] = position
            }
            index = (loaded.fetchedAt, ids)
        }
        return index?.ids[id].map { loaded.value.posts[$0] }
    }

    // MARK: Shutdown

    /// Cancels the running load and every scheduled retry or refresh, answers waiting
    /// requests, and stores nothing more. Nothing of the feed keeps the process alive.
    func shutdown() {
        guard !shutDown else { return }
        writer.stop()
        if let loaderStorage {
            loaderStorage.policy.refreshInterval = nil
            loaderStorage.policy.retryBase = nil
            loaderStorage.cancel()
        }
        waiters.answerAll()
        subscription?.cancel()
        subscription = nil
        adoption?.stop()
        adoption = nil
        // Releasing the loader cancels its scheduled retry/refresh task (its deinit).
        loaderStorage = nil
        shutDown = true
    }
}
