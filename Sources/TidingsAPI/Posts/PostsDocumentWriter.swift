import Foundation
import Logging
import Observing
import TidingsStore

/// Turns the posts loader's states into stored posts documents — each one a change like any
/// other, with its revision and its `posts` event, on this instance and every other one
/// sharing the store. The stored document is the feed's state: this type keeps no record of
/// what it stored, it compares each state with the stored document itself
/// (``PostsStateBody/describes(_:)``).
///
/// - A state the stored document already shows is not stored again. The loader keeps
///   `fetchedAt` through a 304 or an identical body, so those are no change.
/// - A refresh over posts already held is not news while it runs: its `loading` is never
///   stored, so a refresh that ends in a 304 (or the same body) is invisible to subscribers
///   whatever it passed through, and one that brings new posts or fails is announced once, by
///   its outcome.
/// - A state the loader took from a stored document (another instance's fetch, see
///   ``StoredPostsAdoption``) is not stored back while the stored document holds its posts.
/// - At most one document is being stored at a time; a change while it commits is stored
///   next, so the stored documents follow the loader's states in order. When nothing is left
///   to store, the answers that waited for it go out (``PostsWaiters/settle(_:)``).
/// - Nothing here captures the writer strongly: the pipeline's completion holds it weakly,
///   and the loader's states are handed in by the feed.
///
/// Confined to the main actor (the event loop), like the loader it watches.
@MainActor
final class PostsDocumentWriter {
    private let state: TidingsState
    private let writes: WritePipeline
    private let source: FeedSource
    private let waiters: PostsWaiters
    private let timeout: Duration
    private let logger: Logger
    /// The loader's latest state (as its publisher delivers it, before the loader's own
    /// property holds it) and whether it came from the store.
    private var latest: (state: LoadState<FetchedPosts>, fromStore: Bool) = (.idle, false)
    private var storing = false
    private var stopped = false
    private var takingFromStore = false
    private var changedWhileStoring = false

    init(state: TidingsState, writes: WritePipeline, source: FeedSource, waiters: PostsWaiters, timeout: Duration,
         logger: Logger) {
        self.state = state
        self.writes = writes
        self.source = source
        self.waiters = waiters
        self.timeout = timeout
        self.logger = logger
    }

    /// Call with every new state of the loader.
    func loaderDidChange(_ newState: LoadState<FetchedPosts>) {
        latest = (newState, takingFromStore)
        if storing {
            changedWhileStoring = true
        } else {
            storeIfNeeded()
        }
    }

    /// Runs `body`, in which the loader takes a stored document: its state changes then are
    /// stored already.
    func takingFromStore(_ body: () -> Void) {
        takingFromStore = true
        defer { takingFromStore = false }
        body()
    }

    /// No more documents (graceful shutdown).
    func stop() {
        stopped = true
    }

    private func storeIfNeeded() {
        let (loadState, fromStore) = latest
        guard !stopped, !Self.isRefreshOverHeldPosts(loadState), needsStoring(loadState, fromStore: fromStore) else {
            return waiters.settle(loadState)
        }
        storing = true
        changedWhileStoring = false
        waiters.storing()
        let json = PostsStateBody(loadState, source: source.text, timeout: timeout).json
        writes.submit(.setPosts(json)) { [weak self] result in
            guard let self else { return }
            self.storing = false
            if case let .failure(failure) = result {
                // Not stored: the next state change tries again (no retry loop against a
                // store that is down); the answers show what is stored.
                self.logger.warning("posts document not stored: \(failure)")
            }
            // Only a state that came while this one was stored is compared again: a document
            // another instance stored meanwhile is the feed's state now, and a state of this
            // loader it already replaced is not stored back over it.
            if self.changedWhileStoring {
                self.storeIfNeeded()
            } else {
                self.waiters.settle(self.latest.state)
            }
        }
    }

    /// Whether the stored document does not show `loadState` yet. A state taken from a stored
    /// document is stored already — unless the stored document has been replaced since by one
    /// without any posts (say, this instance's own cold `loading`, committed after another
    /// instance's outcome): then the posts this loader holds go back in, so every instance
    /// serves them. A stored document with other posts is left as it is, newer or not: it is
    /// the feed's state, and the loader follows it (storing an older one back over a newer one
    /// would take every instance back).
    private func needsStoring(_ loadState: LoadState<FetchedPosts>, fromStore: Bool) -> Bool {
        let stored = state.postsOfThisFeed?.document
        if fromStore {
            return loadState.lastGood != nil && stored.flatMap(StoredPostsPeek.fetchedAtText) == nil
        }
        // Idle is what is shown while nothing of this feed is stored.
        guard let stored else { return loadState.phase != .idle }
        return !PostsStateBody(loadState, source: source.text, timeout: timeout).describes(stored)
    }

    /// A load a client asked for over held posts, still running: not news until it ends.
    private static func isRefreshOverHeldPosts(_ state: LoadState<FetchedPosts>) -> Bool {
        if case .loading(previous: .some) = state { return true }
        return false
    }
}
