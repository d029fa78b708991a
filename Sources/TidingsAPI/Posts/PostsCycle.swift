import Foundation
import Logging
import Observing
import OpenCombine
import TidingsStore

/// The posts cycle: the one owner of the feed's loads and of the documents that show them.
///
/// It is the only caller of the loader (a plain `DataLoader<FetchedPosts>`, which fetches and
/// decodes off the loop and knows nothing of instances), the only subscriber of the stored
/// posts documents, and the only writer of them. Every document it stores is decided against
/// the store's current revision: the write carries the revision this instance had applied
/// when it decided (`If-Match` on the global revision), so a decision made on a view that
/// another instance's commit has overtaken is refused by the store, and made again once the
/// view has caught up. So a cold instance's `loading` can never replace another instance's
/// `loaded`.
///
/// The stored document is the feed's state (``ServedPosts`` serves it, ``PostsWaiters`` answers
/// once it is stored). What the cycle holds itself is the posts for lookups and the next
/// conditional request — the loader's value, fetched here or taken from a stored document
/// (the loader's request answered from the document's posts, decoded once, off the loop) —
/// and ``shown``, what this instance's own last event says.
///
/// ## Transitions
///
/// | State                  | Event                                      | Next state                          | Effect |
/// |------------------------|--------------------------------------------|-------------------------------------|--------|
/// | `idle`                 | first read, nothing held, stored has posts | `fetching(taking)`                  | the loader takes the stored posts |
/// | `idle`                 | first read, nothing held or stored         | `storing(then: fetch(firstRead))`   | store `loading` (unless stored shows it: then `fetching`) |
/// | `idle`                 | refresh                                    | `storing(then: fetch(requested))`   | store `loading` (not over held posts: then `fetching`) |
/// | `idle`                 | timer (refresh interval or retry)          | `fetching(background)`              | invisible load |
/// | `idle`                 | stored document newer than held            | `fetching(taking)`                  | the loader takes the stored posts |
/// | `fetching`             | refresh                                    | `fetching`                          | none: joins the running load |
/// | `fetching(taking)`, `fetching(background)` not upstream | refresh   | `fetching(then: requested)`         | a requested load follows it |
/// | `fetching`             | route: background, fetch lease elsewhere   | `fetching(skipped)`                 | answered "not modified" (no request) |
/// | `fetching`             | route: load lease taken                    | `fetching(upstream)`                | the upstream request |
/// | `fetching`             | route: load lease elsewhere                | `fetching(joined)`                  | wait (poll the lease) |
/// | `fetching(joined)`     | stored document newer than held            | `fetching(fromStore)`               | the request answered from it |
/// | `fetching(joined)`     | lease free, stored document has posts      | `fetching(fromStore)`               | answered from it: the holder's load ended (a 304 too) |
/// | `fetching(joined)`     | lease free, stored document has no posts   | `fetching(upstream)`                | the upstream request (its whole timeout from now) |
/// | `fetching(joined)`     | lease expired (its holder died), no posts stored | `fetching(upstream)`          | taken over: the upstream request |
/// | `fetching(joined)`     | waited ``joinBudget``                      | `storing(then: settle)`             | failed: no request was sent |
/// | `fetching`             | loader ended                               | `storing(then: settle)` or `idle`   | store the outcome unless stored shows it |
/// | `fetching`             | cancel                                     | `storing(then: settle)` or `idle`   | loader cancelled; `loaded` (held) or `idle` |
/// | `storing`              | committed                                  | `then`                              | answers settle |
/// | `storing`              | refused (another revision)                 | `storing`, then decided again       | catch up to the store's revision first |
/// | `storing(then: settle)`| refresh                                    | `storing(then: fetch(requested))`   | none |
/// | `storing`              | stored document                            | `storing`                           | none: looked at on `idle` |
/// | any                    | shutdown                                   | `stopped`                           | loader cancelled, answers sent |
///
/// Confined to the main actor (the event loop); the loader's request, the lease calls and the
/// commits run off it and come back with `await`.
@MainActor
final class PostsCycle {
    enum State: Equatable {
        /// Nothing running (a background load may be scheduled).
        case idle
        /// The loader's request is out.
        case fetching(Fetch)
        /// A document is being committed; `then`: what follows once it is.
        case storing(then: Next)
        case stopped
    }

    /// One load of the loader: why it runs and where its request is answered from.
    struct Fetch: Equatable {
        var reason: Reason
        var route: Route = .deciding
        /// A load asked for while this one runs that it does not answer (it takes the stored
        /// posts, or is a background refresh another instance does): started when it ends.
        var then: Reason?
    }

    enum Reason: Equatable {
        /// The first reader's load (visible: `loading`).
        case firstRead
        /// `POST /posts/refresh` (visible).
        case requested
        /// A periodic refresh or a retry (invisible: only an outcome that differs is news).
        case background
        /// Taking the stored document at this revision.
        case taking(UInt64)
    }

    enum Route: Equatable {
        case deciding
        /// This instance holds the load lease and asks the upstream.
        case upstream
        /// Another instance's load is running (its lease is live): waiting for its outcome.
        case joined
        /// Answered from the stored document at this revision (no upstream request).
        case fromStore(UInt64)
        /// A background refresh another instance does this period: answered "not modified".
        case skipped
    }

    enum Next: Equatable {
        case settle
        case fetch(Reason)
    }

    /// What this instance's own last event says the feed shows — what it stores.
    enum Shown: Equatable {
        case idle, loading, loaded
        case failed(DataLoaderError)
        /// Taken from the stored document, which shows it already: nothing to store until this
        /// instance's own next load ends.
        case asStored
    }

    /// Set only by the cycle itself (its files: PostsCycle*.swift).
    var state: State = .idle
    private(set) var shown: Shown = .idle
    /// The posts held (the loader's value) with the fetch time they are served with.
    private(set) var held: Loaded<FetchedPosts>?
    /// The upstream's validators of the held posts' fetch (stored with them: whoever takes
    /// the document asks conditionally next). Not changed by a 304 or the same posts again: a
    /// refresh that changes nothing stores nothing.
    private(set) var heldValidators: Validators?
    /// Upstream fetch failures in a row (for the retry delay).
    private(set) var failures = 0

    let loader: DataLoader<FetchedPosts>
    let parts: Parts
    /// What was shown before the running load (an invisible load that ends changing nothing,
    /// or is cancelled, goes back to it).
    var shownBeforeLoad: Shown = .idle
    /// Which load the loader runs (a load's end from before a cancel is not this one's).
    var loadNumber: UInt64 = 0
    /// The fetch time of the stored posts the running load was answered with.
    var takenFetchedAt: Date?
    /// The validators of the stored posts the running load was answered with.
    var takenValidators: Validators?
    /// This instance holds the cluster's load lease for its upstream request: it is let go
    /// once the load's outcome is stored (or found to need no storing), not before, so a load
    /// that joined this one finds the outcome when the lease is free — and a refresh after it
    /// is a new load, never a join of one that already ended.
    var holdsLoadLease = false
    /// The last release of the load lease while it is on its way to the store (``leaseReleased()``).
    var leaseRelease: Task<Void, Never>?
    private var scheduled: Task<Void, Never>?
    private var subscription: AnyCancellable?

    /// What the cycle works with besides the loader.
    struct Parts {
        let state: TidingsState
        let writes: WritePipeline
        let source: FeedSource
        let waiters: PostsWaiters
        let policy: DataLoaderPolicy
        /// Takes the cluster's `posts-fetch` lease (background refreshes: true to fetch).
        let fetchLease: @Sendable () async -> Bool
        /// The cluster's one-load-at-a-time lease of this feed.
        let loadLease: PostsLoadLease
        /// Returns once this instance has applied `revision` (after a refused write).
        let catchUp: @MainActor (UInt64) async -> Void
        /// Returns once a read of the store started after the call is applied (what another
        /// instance committed before the call is then held here).
        var caughtUp: @MainActor () async -> Void = {}
        let logger: Logger
        /// How often a joined load looks whether the holder's lease is free.
        var joinPoll: Duration = .milliseconds(50)
    }

    /// - Parameters:
    ///   - upstream: the client that reaches the upstream feed.
    ///   - makeLoader: makes the loader given the client the cycle routes each of its
    ///     requests through (``PostsCycleClient``, over `upstream`).
    init(_ parts: Parts, upstream: any HTTPClient, makeLoader: (any HTTPClient) -> DataLoader<FetchedPosts>) {
        self.parts = parts
        let link = PostsCycleClient.Link()
        loader = makeLoader(PostsCycleClient(link: link, upstream: upstream, upstreamTimeout: parts.policy.timeout))
        link.cycle = self
        loader.policy.timeout = loadTimeout
        subscription = parts.state.postsEvents.sink { [weak self] _ in self?.documentStored() }
        enterIdle()
    }

    isolated deinit {
        scheduled?.cancel()
    }

    // MARK: Events

    /// The first reader's duty: starts the load when nothing was loaded or tried yet.
    func read() {
        guard state == .idle, held == nil, shown == .idle else { return }
        beginVisibleLoad(.firstRead)
    }

    /// Starts a load, or joins the running one (`POST /posts/refresh`).
    func refresh() {
        switch state {
        case .idle: beginVisibleLoad(.requested)
        case .storing(then: .settle), .storing(then: .fetch(.background)):
            state = .storing(then: .fetch(.requested))
        case var .fetching(fetch):
            // Joined by the refresh, unless this load does not ask the upstream at all.
            switch (fetch.reason, fetch.route) {
            case (.taking, _), (.background, .skipped), (.background, .deciding):
                fetch.then = .requested
                state = .fetching(fetch)
            default:
                break
            }
        case .storing, .stopped: break
        }
    }

    /// Abandons the running load: `loaded` with the posts held, or `idle`. False when no load
    /// was running.
    func cancel() -> Bool {
        guard case let .fetching(fetch) = state, loader.cancel() else { return false }
        loadNumber &+= 1
        if fetch.reason == .background || fetch.route == .skipped {
            shown = shownBeforeLoad
        } else if case .taking = fetch.reason {
            shown = shownBeforeLoad
        } else {
            shown = held == nil ? .idle : .loaded
        }
        storeThen(.settle)
        return true
    }

    /// Stops: the running load is cancelled, nothing more is stored or scheduled.
    func stop() {
        guard state != .stopped else { return }
        state = .stopped
        loadNumber &+= 1
        scheduled?.cancel()
        scheduled = nil
        subscription?.cancel()
        subscription = nil
        _ = loader.cancel()
        releaseLoadLease()
    }

    /// A posts document was applied (this instance's or another's).
    private func documentStored() {
        if state == .idle { _ = takeStoredIfNewer() }
        // While fetching (joined) the route looks at each poll; while storing, on `idle`.
    }

    // MARK: Loads

    /// A load a client can see: `loading` is stored first (decided against the store) unless
    /// the store shows it already or it runs over held posts.
    func beginVisibleLoad(_ reason: Reason) {
        shownBeforeLoad = shown
        shown = .loading
        storeThen(.fetch(reason))
    }

    /// Starts the loader's request for `reason`, or takes the stored posts instead when a first
    /// load finds some (another instance loaded them while this one decided).
    func startLoad(_ reason: Reason) {
        if reason == .firstRead, held == nil, let stored = storedWithPosts() {
            return take(stored)
        }
        if reason == .background { shownBeforeLoad = shown }
        run(Fetch(reason: reason))
    }

    /// Takes the stored document's posts into the loader (its request answered from them).
    func take(_ stored: StoredPostsDocument) {
        shownBeforeLoad = shown
        // Answers wait for it: the posts they show are then the ones lookups find.
        parts.waiters.storing()
        run(Fetch(reason: .taking(stored.revision), route: .fromStore(stored.revision)))
    }

    private func run(_ fetch: Fetch) {
        scheduled?.cancel()
        scheduled = nil
        state = .fetching(fetch)
        if fetch.reason == .requested || fetch.reason == .firstRead {
            // Over held posts nothing was stored: the answers show the load now.
            parts.waiters.settle(shownState)
        }
        loadNumber &+= 1
        let number = loadNumber
        takenFetchedAt = nil
        takenValidators = nil
        loader.refresh(showingLoading: fetch.reason == .requested || fetch.reason == .firstRead)
        let loader = self.loader
        Task { [weak self] in
            let ended = await loader.settled()
            self?.loadEnded(ended, number: number)
        }
    }

    /// The loader's request ended: what it means depends on where it was answered from.
    private func loadEnded(_ ended: LoadState<FetchedPosts>, number: UInt64) {
        guard number == loadNumber, case let .fetching(fetch) = state else { return }
        switch (ended, fetch.route) {
        case let (.loaded(loaded), .fromStore):
            // The fetch time is the stored document's, whatever the loader stamped.
            held = Loaded(value: loaded.value, fetchedAt: takenFetchedAt ?? held?.fetchedAt ?? loaded.fetchedAt)
            heldValidators = takenValidators
            shown = .asStored
        case (.loaded, .skipped):
            shown = shownBeforeLoad
        case let (.loaded(loaded), _):
            failures = 0
            // A 304, the same body, or the same posts in other bytes: nothing new, the held
            // fetch time stays.
            if let held, held.value.hasSameJSON(as: loaded.value) {
                shown = .loaded
            } else {
                held = loaded
                heldValidators = loader.validators
                shown = .loaded
            }
        case let (.failed(error, _), route):
            if case .fromStore = route {
                parts.logger.warning("posts: a stored document could not be taken: \(error)")
                shown = shownBeforeLoad
            } else {
                failures += 1
                // Joined to the end: the request never left (other instances' loads held the
                // lease), whatever ended the wait — said so, not as an upstream timeout.
                let failure = route == .joined
                    ? DataLoaderError.connectionFailed(LoadLeaseHeldThroughout(waited: joinBudget).description) : error
                parts.logger.notice("posts feed failed: \(PostsStateBody.message(failure, timeout: parts.policy.timeout))")
                shown = .failed(failure)
            }
        case (.idle, _), (.loading, _):
            shown = held == nil ? .idle : shownBeforeLoad
        }
        storeThen(fetch.then.map(Next.fetch) ?? .settle)
    }

    // MARK: Idle

    /// Nothing runs: the answers settle, a newer stored document is taken, or the next
    /// background load is scheduled.
    func enterIdle() {
        state = .idle
        parts.waiters.settle(shownState)
        if takeStoredIfNewer() { return }
        schedule()
    }

    /// Takes the stored document when its posts are newer than those held. True when taken.
    private func takeStoredIfNewer() -> Bool {
        guard let stored = storedNewerThanHeld() else { return false }
        take(stored)
        return true
    }

    /// The stored document of this feed when it shows posts newer than those held.
    func storedNewerThanHeld() -> StoredPostsDocument? {
        guard let stored = storedWithPosts() else { return nil }
        if let held, let fetchedAt = stored.fetchedAt, fetchedAt <= held.fetchedAt { return nil }
        return stored
    }

    /// The stored document of this feed when it shows posts.
    func storedWithPosts() -> StoredPostsDocument? {
        guard let stored = StoredPostsDocument(parts.state.postsOfThisFeed), stored.fetchedAt != nil else { return nil }
        return stored
    }

    /// The next background load: a retry after a failure (back-off), else the periodic refresh.
    private func schedule() {
        scheduled?.cancel()
        scheduled = nil
        let delay: Duration?
        if case .failed = shown {
            delay = parts.policy.retryDelay(afterFailures: max(1, failures))
        } else if held != nil {
            delay = parts.policy.refreshInterval
        } else {
            delay = nil
        }
        guard let delay else { return }
        scheduled = Task { [weak self] in
            do { try await Task.sleep(for: delay) } catch { return }
            guard let self, self.state == .idle else { return }
            self.scheduled = nil
            self.startLoad(.background)
        }
    }

    // MARK: What is shown

    /// ``shown`` with the posts held, as a load state (what a stored document is made of).
    var shownState: LoadState<FetchedPosts> {
        switch shown {
        case .idle: held.map(LoadState.loaded) ?? .idle
        case .loading: .loading(previous: held)
        case .loaded, .asStored: held.map(LoadState.loaded) ?? .idle
        case let .failed(error): .failed(error, previous: held)
        }
    }
}
