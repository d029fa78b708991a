import Foundation
import Logging
import Observing
import TidingsStore

/// Storing what the cycle shows: one document at a time, each decided against the stored
/// document and written only if the store is still at the revision it was decided on.
extension PostsCycle {
    /// Stores the document for ``shown`` if the stored one does not show it, then goes on with
    /// `next`; goes on at once when there is nothing to store.
    func storeThen(_ next: Next) {
        guard state != .stopped else { return }
        guard let json = documentToStore() else { return proceed(next) }
        state = .storing(then: next)
        parts.waiters.storing()
        let decidedAt = parts.state.revision
        parts.writes.submit(.setPosts(json, ifRevision: decidedAt)) { [weak self] result in
            self?.committed(result)
        }
    }

    private func committed(_ result: Result<WriteOutcome, WriteFailure>) {
        guard case let .storing(next) = state else { return }
        switch result {
        case .success:
            proceed(next)
        case let .failure(.preconditionFailed(_, current)):
            // Another commit came first: this instance's view was behind. Decide again on the
            // view that includes it (the other instance's outcome may make this one moot).
            Task { [weak self] in
                await self?.parts.catchUp(current)
                guard let self, case let .storing(next) = self.state else { return }
                self.storeThen(next)
            }
        case let .failure(failure):
            // Not stored (the store is down): the next event decides again; answers show what
            // is stored.
            parts.logger.warning("posts document not stored: \(failure)")
            proceed(next)
        }
    }

    private func proceed(_ next: Next) {
        // The outcome is stored (or needs no storing): the cluster may load again.
        releaseLoadLease()
        switch next {
        case .settle:
            enterIdle()
        case let .fetch(reason):
            // A load a client sees shows `loading` first (stored unless over held posts).
            if reason == .firstRead || reason == .requested, shown != .loading {
                beginVisibleLoad(reason)
            } else {
                startLoad(reason)
            }
        }
    }

    /// The document to store for ``shown``, or nil when there is none to store:
    /// - taken from the store (``Shown/asStored``): the store shows it;
    /// - a load over held posts, still running: not news until it ends (so a refresh that ends
    ///   in a 304 is invisible, whatever it passed through);
    /// - `idle` while nothing of this feed is stored: that is what is shown;
    /// - behind the stored document — it holds newer posts than this instance (another
    ///   instance's): the feed's state is that one, and this instance takes it;
    /// - the stored document shows it already (compared by its two ends: the same members
    ///   but the posts, and the posts are those of the fetch at `fetchedAt`).
    func documentToStore() -> String? {
        if shown == .asStored { return nil }
        if shown == .loading, held != nil { return nil }
        let body = PostsStateBody(shownState, source: parts.source.text, timeout: parts.policy.timeout,
                                  validators: heldValidators)
        guard let stored = parts.state.postsOfThisFeed?.document else { return shown == .idle ? nil : body.json }
        if let storedAt = StoredPostsPeek.fetchedAtText(stored),
           storedAt > held.map({ PostsStateBody.rfc3339($0.fetchedAt) }) ?? "" {
            return nil
        }
        return body.describes(stored) ? nil : body.json
    }
}
