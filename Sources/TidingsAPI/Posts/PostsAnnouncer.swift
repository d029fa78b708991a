import Foundation
import Observing

/// Turns the posts loader's state changes into `posts` events: one per change a client would
/// care about (loading started, loaded with new content, failed, cancelled), never one for a
/// 304 or an identical body.
///
/// - What counts: the phase, the error and which content is held (its fetch time). The loader
///   keeps `fetchedAt` through a 304 or an identical body, so those are no change.
/// - A refresh over posts already held passes through `loading` and, on a 304, straight back.
///   That `loading` is held back for ``loadingGrace``: a refresh that ends within it emits
///   nothing at all when nothing changed, and only its outcome otherwise. A slower one is
///   announced (clients see it is loading), and then so is its end.
/// - Coalescing and order: at most one announcement is in flight. Its revision comes from the
///   write pipeline (durable, in submission order); when it is granted, the event carries the
///   state *as it is then*, so changes that happened during the commit fold into it, and a
///   change back to what clients last heard (loading → 304 within the commit) takes no event —
///   its revision stays unused, which readers cannot tell from a revision of another topic.
///   Any change after that starts the next announcement, so events follow the states in order.
/// - A stream's snapshot shows ``lastAnnouncedJSON``, the state as of the current revision, so
///   the live events after it never repeat or skip what the snapshot showed.
///
/// Confined to the main actor (the event loop), like the loader it watches.
@MainActor
final class PostsAnnouncer {
    /// How long a refresh over held posts may stay `loading` before it is announced.
    static let loadingGrace: Duration = .milliseconds(500)

    /// What clients distinguish; equal keys mean "nothing to tell".
    struct Key: Equatable {
        let phase: LoadPhase
        let error: DataLoaderError?
        let fetchedAt: Date?

        init(_ state: LoadState<FetchedPosts>) {
            phase = state.phase
            error = state.error
            fetchedAt = state.lastGood?.fetchedAt
        }
    }

    private let state: TidingsState
    private let writes: WritePipeline
    /// The loader's current state and the `GET /posts` body for it (one line of JSON).
    private let current: @MainActor () -> (state: LoadState<FetchedPosts>, json: String)
    private var lastAnnounced = Key(.idle)
    /// The data of the last `posts` event (nil before the first): what a stream's snapshot
    /// shows at the current revision, so a snapshot never runs ahead of the events after it.
    private(set) var lastAnnouncedJSON: String?
    private var announcing = false
    private var grace: (id: UInt64, task: Task<Void, Never>)?
    private var graceID: UInt64 = 0
    /// The current refresh's `loading` is past its grace and may be announced.
    private var loadingMayBeAnnounced = false
    private var stopped = false
    /// Called when an announcement could not take a revision (for logs).
    var onFailure: (@MainActor (WriteFailure) -> Void)?

    init(state: TidingsState, writes: WritePipeline,
         current: @escaping @MainActor () -> (state: LoadState<FetchedPosts>, json: String)) {
        self.state = state
        self.writes = writes
        self.current = current
    }

    /// Call after every state change of the loader (with the new state).
    func stateDidChange(_ newState: LoadState<FetchedPosts>) {
        guard !stopped else { return }
        if case .loading(previous: .some) = newState {
            if grace == nil && !loadingMayBeAnnounced { startGrace() }
        } else {
            grace?.task.cancel()
            grace = nil
            loadingMayBeAnnounced = false
        }
        announceIfNeeded()
    }

    /// No more events (graceful shutdown: streams are already ended).
    func stop() {
        stopped = true
        grace?.task.cancel()
        grace = nil
    }

    private func startGrace() {
        graceID &+= 1
        let id = graceID
        let task = Task { [weak self] in
            do { try await Task.sleep(for: Self.loadingGrace) } catch { return }
            guard let self, self.grace?.id == id else { return }
            self.grace = nil
            self.loadingMayBeAnnounced = true
            self.announceIfNeeded()
        }
        grace = (id, task)
    }

    /// True while the current state is a refresh's `loading` still within its grace.
    private func heldBack(_ loadState: LoadState<FetchedPosts>) -> Bool {
        if case .loading(previous: .some) = loadState { return !loadingMayBeAnnounced }
        return false
    }

    private func announceIfNeeded() {
        guard !stopped, !announcing else { return }
        let now = current().state
        guard !heldBack(now), Key(now) != lastAnnounced else { return }
        announcing = true
        writes.submit(.announce(topic: "posts")) { [weak self] result in
            guard let self else { return }
            self.announcing = false
            switch result {
            case let .success(.announced(revision)):
                self.publish(revision: revision)
            case let .failure(failure):
                self.onFailure?(failure)
            case .success:
                break
            }
            self.announceIfNeeded()
        }
    }

    /// Records and sends the event for the state as it is now, unless it is no news.
    private func publish(revision: UInt64) {
        guard !stopped else { return }
        let (now, json) = current()
        let key = Key(now)
        guard !heldBack(now), key != lastAnnounced else { return }
        lastAnnounced = key
        lastAnnouncedJSON = json
        let entry = JournalEntry(revision: revision, topic: .posts,
                                 frame: EventFrame.frame(id: revision, event: "posts", json: json))
        state.record(entry)
        state.postsEvents.send(entry)
    }
}
