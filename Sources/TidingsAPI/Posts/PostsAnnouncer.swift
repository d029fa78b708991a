import Foundation
import Observing

/// Turns the posts loader's state changes into stored posts documents — each one a change like
/// any other, with its revision and its `posts` event, on this instance and every other one
/// sharing the store.
///
/// - What counts: the phase, the error and which content is held (its fetch time). The loader
///   keeps `fetchedAt` through a 304 or an identical body, so those are no change.
/// - A refresh over posts already held is not news while it runs: its `loading` counts as the
///   state it started from, so a refresh that ends in a 304 (or the same body) is invisible to
///   subscribers whatever it passed through, and one that brings new posts or fails is
///   announced once, by its outcome.
/// - At most one document is being stored at a time; a change while it commits is stored
///   next, so the stored documents follow the loader's states in order.
///
/// Confined to the main actor (the event loop), like the loader it watches.
@MainActor
final class PostsAnnouncer {
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

    private let writes: WritePipeline
    /// The loader's current state and the `GET /posts` body for it (one line of JSON).
    private let current: @MainActor () -> (state: LoadState<FetchedPosts>, json: String)
    private var lastStored = Key(.idle)
    private var storing = false
    private var stopped = false
    /// Called when a document could not be stored (for logs).
    var onFailure: (@MainActor (WriteFailure) -> Void)?
    /// Called whenever the loader's state is as stored as it will be (its document committed,
    /// or nothing to store): answers that show the state may go out without running ahead of
    /// the `posts` events.
    var onSettled: (@MainActor () -> Void)?

    init(writes: WritePipeline, current: @escaping @MainActor () -> (state: LoadState<FetchedPosts>, json: String)) {
        self.writes = writes
        self.current = current
    }

    /// Call after every state change of the loader (with the new state).
    func stateDidChange(_ newState: LoadState<FetchedPosts>) {
        storeIfNeeded()
    }

    /// The loader is about to take `state` from a stored document: it is stored already.
    func willAdopt(_ state: LoadState<FetchedPosts>) {
        lastStored = Key(state)
    }

    /// No more documents (graceful shutdown).
    func stop() {
        stopped = true
    }

    private func storeIfNeeded() {
        guard !storing else { return }
        guard !stopped else { return onSettled?() ?? () }
        let (state, json) = current()
        // A refresh over held content: clients keep seeing what they saw before it.
        if case .loading(previous: .some) = state { return onSettled?() ?? () }
        let key = Key(state)
        guard key != lastStored else { return onSettled?() ?? () }
        lastStored = key
        storing = true
        writes.submit(.setPosts(json)) { [weak self] result in
            guard let self else { return }
            self.storing = false
            if case let .failure(failure) = result {
                self.onFailure?(failure)
                // Not stored: the next state change tries again (no retry loop against a
                // store that is down).
                self.lastStored = Key(.idle)
                self.onSettled?()
                return
            }
            self.storeIfNeeded()
        }
    }
}
