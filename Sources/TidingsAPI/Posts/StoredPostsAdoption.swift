import Foundation
import Observing
import OpenCombine
import TidingsStore

/// Takes the posts another instance fetched — a stored document, arrived through the change
/// path — into this instance's loader: its conditional requests, its refresh schedule and
/// `GET /posts/{id}` then go from the newest posts, and a load that joined another instance's
/// (``ClusterFeedClient``) ends with that load's outcome. What is *served* needs none of this:
/// it is the stored document already (``ServedPosts``).
///
/// A stored document can be 8 MiB of posts. It is parsed off the loop, and not at all when its
/// fetch time (read from its front) is not newer than the loader's — this instance's own
/// documents never are. Confined to the main actor.
@MainActor
final class StoredPostsAdoption {
    private let state: TidingsState
    private let loader: DataLoader<FetchedPosts>
    private let writer: PostsDocumentWriter
    private let gate: RefreshGate
    private var subscription: AnyCancellable?
    /// True while the loader takes a document from here (its state change is not a load's end).
    private var taking = false

    /// Starts following stored documents; the one stored now is taken at once (parsed on the
    /// loop, so the loader holds it before its first `fetchDataIfNeeded()`).
    init(state: TidingsState, loader: DataLoader<FetchedPosts>, writer: PostsDocumentWriter,
         gate: RefreshGate) {
        self.state = state
        self.loader = loader
        self.writer = writer
        self.gate = gate
        adoptStored(synchronously: true, held: loader.state.lastGood)
        subscription = state.postsEvents.sink { [weak self] _ in
            guard let self else { return }
            self.adoptStored(synchronously: false, held: self.loader.state.lastGood)
        }
    }

    /// Call with the loader's new state (its own property still holds the old one): a document
    /// that came while a load was running here could not be taken then; once the load has
    /// ended, it is.
    func loaderDidChange(_ newState: LoadState<FetchedPosts>) {
        if !taking, !loader.isFetching { adoptStored(synchronously: false, held: newState.lastGood) }
    }

    func stop() {
        subscription?.cancel()
        subscription = nil
    }

    private func adoptStored(synchronously: Bool, held: Loaded<FetchedPosts>?) {
        // Posts of another source (the server was restarted with another --feed-url) are not
        // this feed's.
        guard let document = state.postsOfThisFeed?.document, let fetchedAt = StoredPostsPeek.fetchedAt(document) else { return }
        if finishJoinedLoad(with: document) { return }
        if let held, held.fetchedAt >= fetchedAt { return }
        if synchronously {
            if let stored = Self.loaded(fromDocument: document) { take(stored) }
            return
        }
        Task { @MainActor [weak self] in
            let stored = await Task.detached { Self.loaded(fromDocument: document) }.value
            guard let self, let stored else { return }
            self.take(stored)
        }
    }

    /// Ends a load that joined another instance's with that load's stored outcome (loaded
    /// posts); false when no load is joining or `document` is not such an outcome.
    private func finishJoinedLoad(with document: String) -> Bool {
        guard gate.isJoining, loader.isFetching, StoredPostsPeek.isLoaded(document) else { return false }
        Task { @MainActor [weak self] in
            let stored = await Task.detached { Self.loaded(fromDocument: document) }.value
            guard let self, let stored, self.gate.isJoining, self.loader.isFetching else { return }
            self.gate.setJoining(false)
            self.taking = true
            defer { self.taking = false }
            self.writer.takingFromStore { self.loader.finishJoined(stored.loaded, body: stored.body) }
        }
        return true
    }

    /// Hands `stored` to the loader (which keeps what it holds when that is as new).
    private func take(_ stored: (loaded: Loaded<FetchedPosts>, body: Data)) {
        taking = true
        defer { taking = false }
        writer.takingFromStore { loader.adopt(stored.loaded, body: stored.body) }
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
}
