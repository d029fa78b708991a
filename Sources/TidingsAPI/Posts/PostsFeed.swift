import EventHTTP
import HTTPTypes
import Foundation
import Logging
import Observing
import OpenCombine
import TidingsStore

/// The posts resource's model: a `DataLoader<FetchedPosts>` over the upstream feed (the posts
/// and their JSON, both made off the loop), the `GET /posts` body for its state, the requests
/// waiting for a load to end (`?wait=`), and its events.
///
/// The source URL is `--feed-url`, or the server's own `GET /sample/posts`. The latter needs
/// the bound port, known only after `app.start()`; it is resolved at first use, which is always
/// a request (or a stream's snapshot), hence after start. A wildcard listen address is fetched
/// through loopback (`0.0.0.0` → `127.0.0.1`, `::` → `localhost`, see ``loopbackHost(for:)``).
///
/// Confined to the main actor (the event loop): the loader's request and decoding run off it,
/// their outcome comes back with `await`.
@MainActor
final class PostsFeed {
    private let configuration: TidingsConfiguration
    private let boundPort: @MainActor () -> Int
    private let isDraining: @MainActor () -> Bool
    private let client: any HTTPClient
    private let logger: Logger
    private var loaderStorage: DataLoader<FetchedPosts>?
    private var subscription: AnyCancellable?
    private var announcer: PostsAnnouncer!
    private var resolvedSource: URL?
    private var shutDown = false
    private let meter: UpstreamFetchMeter
    private let state: TidingsState
    private let gate = RefreshGate()
    private var adoption: AnyCancellable?
    /// Takes the cluster's fetch lease for this instance (true: fetch upstream).
    var fetchLease: @Sendable () async -> Bool = { true }
    /// The cluster's one-fetch-at-a-time lease (see ``ClusterFeedClient``).
    var loadLease = PostsLoadLease.alone

    /// The loader's state, updated *before* anyone is told of a change (`@Published` announces
    /// in `willSet`, when the loader's own property still holds the old value).
    private(set) var current: LoadState<FetchedPosts> = .idle
    private var cachedBody: (json: String, bytes: [UInt8])?
    /// `entityTag` for the cached body, by the stored revision it was checked against.
    private var cachedTag: (revision: UInt64?, tag: String)?
    private var index: (fetchedAt: Date, ids: [String: Int])?
    private lazy var waiters = PostsWaiters { [unowned self] in checkWaiters() }

    /// - Parameters:
    ///   - boundPort: the server's port once started (for the default sample feed URL).
    ///   - isDraining: true once shutdown began (waiting requests are then answered at once).
    ///   - client: the upstream client put into the loader's environment.
    init(configuration: TidingsConfiguration, state: TidingsState, writes: WritePipeline,
         client: any HTTPClient = CurlHTTPClient(),
         boundPort: @escaping @MainActor () -> Int, isDraining: @escaping @MainActor () -> Bool,
         logger: Logger) {
        self.configuration = configuration
        self.boundPort = boundPort
        self.isDraining = isDraining
        self.client = client
        self.logger = logger
        meter = UpstreamFetchMeter(logger: logger)
        self.state = state
        announcer = PostsAnnouncer(writes: writes) { [unowned self] in (current, json) }
        announcer.onFailure = { [logger] failure in
            logger.warning("posts document not stored: \(failure)")
        }
        // `?wait=` answers go out once the state they show is stored, so a client that reads
        // the answer and then the stream never sees an older state after a newer one.
        announcer.onSettled = { [unowned self] in
            if current.phase != .loading { waiters.answerAll(with: response()) }
        }
        // A stream's snapshot is the stored document as of the current revision (the live
        // state may be ahead of it while it is being stored); before the first one, idle.
        state.idlePostsJSON = { [unowned self] in
            PostsStateBody(.idle, source: source.absoluteString, timeout: policy.timeout).json
        }
        state.isThisFeedsDocument = { [unowned self] document in StoredPostsPeek.isFrom(source.absoluteString, document) }
        // Another instance's fetch, stored as a document: taken over so every instance serves
        // the same posts (and announces nothing new: it is what was stored).
        adoption = state.postsEvents.sink { [unowned self] _ in adoptStoredPosts() }
    }

    /// The upstream policy from the flags: `--feed-timeout`, 8 MiB, back-off 1 s doubling up
    /// to 60 s, `--feed-refresh` (0 = never).
    var policy: DataLoaderPolicy {
        DataLoaderPolicy(timeout: .seconds(configuration.feedTimeout), maxBodyBytes: 8 << 20,
                         retryBase: .seconds(1), retryCap: .seconds(60),
                         refreshInterval: configuration.feedRefresh > 0 ? .seconds(configuration.feedRefresh) : nil)
    }

    // MARK: Source

    /// The feed URL (`source` in `GET /posts`).
    var source: URL {
        if let resolvedSource { return resolvedSource }
        if let feed = configuration.feedURL, let url = URL(string: feed) {
            resolvedSource = url
            return url
        }
        let port = boundPort()
        let url = URL(string: "http://\(Self.loopbackHost(for: configuration.host)):\(port)/sample/posts")!
        if port > 0 { resolvedSource = url }  // before start the port is not known yet
        return url
    }

    /// The host to reach our own listener on: loopback for wildcard addresses. IPv6 loopback is
    /// reached as `localhost` (libcurl tries `::1` and `127.0.0.1`), which every client takes
    /// (FoundationNetworking's URLSession, the feed's client once, refused a bracketed IPv6 literal).
    static func loopbackHost(for host: String) -> String {
        switch host {
        case "", "0.0.0.0", "*": "127.0.0.1"
        case "::", "[::]", "::1", "[::1]": "localhost"
        default: host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        }
    }

    // MARK: Loader

    /// Created at first use, when the source URL can be known.
    private var loader: DataLoader<FetchedPosts>? {
        if shutDown { return nil }
        if let loaderStorage { return loaderStorage }
        var headers: [String: String] = [:]
        // Our own sample feed sits behind the same access rules as every other read. A token is
        // never sent to a --feed-url upstream.
        if configuration.feedURL == nil, let token = configuration.readToken ?? configuration.apiTokens.first {
            headers["Authorization"] = "Bearer \(token)"
        }
        var environment = EnvironmentValues()
        environment.httpClient = ClusterFeedClient(base: MeteredHTTPClient(base: client, meter: meter), gate: gate,
                                                   lease: { [fetchLease] in await fetchLease() }, load: loadLease)
        let loader = DataLoader<FetchedPosts>(request: HTTPClientRequest(url: source, headers: headers),
                                              environment: environment, policy: policy) { [meter] data in
            do {
                let posts = FetchedPosts(try Post.decodeFeed(data))
                meter.decoded(data, ok: true)
                return posts
            } catch {
                meter.decoded(data, ok: false)
                throw error
            }
        }
        loaderStorage = loader
        subscription = loader.$state.dropFirst().sink { [unowned self] newState in stateDidChange(newState) }
        adoptStoredPosts(synchronously: true)
        return loader
    }

    /// Takes the stored posts document when it holds posts newer than the loader's, fetched
    /// from this instance's source. At the loader's creation (`synchronously`) it is parsed at
    /// once, so the first answer shows it; after a `posts` event it is parsed off the loop,
    /// and not at all when its fetch time (read from its front) is not newer — this
    /// instance's own documents never are.
    private func adoptStoredPosts(synchronously: Bool = false) {
        guard loaderStorage != nil, let document = state.posts?.document,
              let fetchedAt = StoredPostsPeek.fetchedAt(document) else { return }
        if finishJoinedLoad(with: document) { return }
        if let held = current.lastGood, held.fetchedAt >= fetchedAt { return }
        let source = source.absoluteString
        // Posts of another source (the server was restarted with another --feed-url) are not
        // this feed's: they are neither served nor announced as loaded.
        guard StoredPostsPeek.isFrom(source, document) else { return }
        if synchronously {
            if let stored = Self.loaded(fromDocument: document) { adopt(stored) }
            return
        }
        Task { @MainActor [weak self] in
            let stored = await Task.detached { Self.loaded(fromDocument: document) }.value
            guard let self, let stored else { return }
            self.adopt(stored)
        }
    }

    /// Ends a load that joined another instance's with that load's stored outcome (loaded
    /// posts of this source); false when no load is joining or `document` is not such an outcome.
    private func finishJoinedLoad(with document: String) -> Bool {
        guard gate.isJoining, loaderStorage?.isFetching == true, StoredPostsPeek.isLoaded(document),
              StoredPostsPeek.isFrom(source.absoluteString, document) else { return false }
        Task { @MainActor [weak self] in
            let stored = await Task.detached { Self.loaded(fromDocument: document) }.value
            guard let self, let stored, let loader = self.loaderStorage, self.gate.isJoining, loader.isFetching else { return }
            self.gate.setJoining(false)
            let held = self.current.lastGood.map { $0.fetchedAt >= stored.loaded.fetchedAt } ?? false
            self.announcer.willAdopt(.loaded(held ? self.current.lastGood! : stored.loaded))
            loader.finishJoined(stored.loaded, body: stored.body)
        }
        return true
    }

    /// Hands `stored` to the loader unless what it holds by now is as new.
    private func adopt(_ stored: (loaded: Loaded<FetchedPosts>, body: Data)) {
        guard let loaderStorage else { return }
        if let held = current.lastGood, held.fetchedAt >= stored.loaded.fetchedAt { return }
        announcer.willAdopt(.loaded(stored.loaded))
        loaderStorage.adopt(stored.loaded, body: stored.body)
    }

    /// The loaded posts a stored `GET /posts` document shows (nil unless it shows some).
    nonisolated static func loaded(fromDocument document: String) -> (loaded: Loaded<FetchedPosts>, body: Data)? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any],
              let fetchedAt = (object["fetchedAt"] as? String).flatMap({ try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse($0) }),
              let posts = object["posts"], let body = try? JSONSerialization.data(withJSONObject: posts),
              let decoded = try? Post.decodeFeed(body) else { return nil }
        // Half a microsecond up, so the millisecond text (which truncates) reads back the same.
        return (Loaded(value: FetchedPosts(decoded), fetchedAt: fetchedAt.addingTimeInterval(0.000_000_5)), body)
    }

    private func stateDidChange(_ newState: LoadState<FetchedPosts>) {
        current = newState
        gate.setHoldsContent(newState.lastGood != nil)
        cachedBody = nil
        cachedTag = nil
        if let error = newState.error {
            logger.notice("posts feed failed: \(PostsStateBody.message(error, timeout: policy.timeout))")
        }
        announcer.stateDidChange(newState)
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

    /// The `GET /posts` body for the current state (encoded once per state).
    var json: String {
        if let cachedBody { return cachedBody.json }
        let json = PostsStateBody(current, source: source.absoluteString, timeout: policy.timeout).json
        cachedBody = (json, Array(json.utf8))
        return json
    }

    /// `200` with the current state, and its `ETag`.
    func response(status: HTTPResponse.Status = .ok) -> Response {
        _ = json
        return .json(bytes: cachedBody!.bytes, status: status, headers: [.eTag: entityTag])
    }

    /// The validator of the current body: the stored document's revision when the body is that
    /// document (what every `posts` event and every instance shows), else — while the live state
    /// runs ahead of the stored one, or before any was stored — a tag from the content, so a
    /// body never shares a tag with another.
    private var entityTag: String {
        let stored = state.posts
        if let cached = cachedTag, cached.revision == stored?.revision {
            return cached.tag
        }
        let tag: String
        if let stored, let body = cachedBody?.bytes, Self.same(stored.document, body) {
            tag = EntityTag(revision: stored.revision).header
        } else {
            tag = ContentTag.of(Array(PostsStateBody(current, source: source.absoluteString, timeout: policy.timeout).identity.utf8))
        }
        cachedTag = (stored?.revision, tag)
        return tag
    }

    /// Whether `text`'s UTF-8 is `bytes`: one `memcmp` (a generic element-by-element compare of
    /// a 4 MB document held the loop for a quarter of a second in a debug build).
    private static func same(_ text: String, _ bytes: [UInt8]) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            utf8.count == bytes.count && bytes.withUnsafeBufferPointer { other in
                guard let a = utf8.baseAddress, let b = other.baseAddress else { return true }
                return memcmp(a, b, utf8.count) == 0
            }
        }
    }

    /// Answers `responder` once the running visible load ends, or after `seconds`, or at once
    /// when nothing is loading. Never blocks the loop: the responder waits in a list.
    func answerWhenSettled(_ responder: Responder, within seconds: Double) {
        guard current.phase == .loading, seconds > 0, !isDraining() else {
            responder.send(response())
            return
        }
        waiters.add(responder, deadline: ContinuousClock.now + .seconds(seconds))
    }

    /// The waiters' periodic check: deadlines, and shutdown (whose drain waits for in-flight
    /// requests, so a `?wait=30` must not hold it). A load that has ended is answered by the
    /// announcer's `onSettled`, once its document is stored: answered from here, between the
    /// loader's change and that commit, the answer would carry a revision older than the
    /// `posts` events still to come, and a client would take its state back to `loading`.
    private func checkWaiters() {
        if isDraining() {
            waiters.answerAll(with: response())
        } else {
            waiters.answerExpired(with: response())
        }
    }

    /// The post whose id, in its string form, is `id` (from the last good posts).
    func post(id: String) -> Post? {
        guard let loaded = current.lastGood else { return nil }
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
    /// requests, and announces nothing more. Nothing of the feed keeps the process alive.
    func shutdown() {
        guard !shutDown else { return }
        announcer.stop()
        if let loaderStorage {
            loaderStorage.policy.refreshInterval = nil
            loaderStorage.policy.retryBase = nil
            loaderStorage.cancel()
        }
        waiters.answerAll(with: response())
        subscription?.cancel()
        subscription = nil
        // Releasing the loader cancels its scheduled retry/refresh task (its deinit).
        loaderStorage = nil
        shutDown = true
    }
}
