import TidingsStore

/// Before a stream resumes from an id this instance has not applied yet: when the store has
/// committed that revision (another instance's write, a moment ago), waits — at most
/// ``limit`` — for the change feed to apply it, so the stream gets the replay it asked for
/// rather than `reset` and a snapshot. API.md: an id from one instance resumes on any other.
/// An id the store has not reached (a client's bogus or future id) is answered at once.
@MainActor
struct StreamCatchUp {
    let store: any ChangeStore
    let feed: ChangeFeed
    /// The longest wait for the feed.
    var limit: Duration = .seconds(1)

    /// Returns once `revision` is applied, the store says it has no such revision, or `limit`
    /// passed.
    func wait(for revision: UInt64) async {
        guard revision > 0,
              let next = try? await store.changes(after: revision - 1, limit: 1).first,
              next.revision >= revision else { return }
        feed.ring()
        let limit = limit
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = ResumeOnce(continuation)
            Task { @MainActor in
                await feed.waitUntilApplied(revision)
                once.resume()
            }
            Task { @MainActor in
                try? await Task.sleep(for: limit)
                once.resume()
            }
        }
    }
}

/// A continuation resumed by whichever of two tasks comes first.
@MainActor
private final class ResumeOnce {
    private var continuation: CheckedContinuation<Void, Never>?
    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
    func resume() {
        continuation?.resume()
        continuation = nil
    }
}
