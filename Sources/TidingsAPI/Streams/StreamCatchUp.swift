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
        await waitAtMost(limit) { await feed.waitUntilApplied(revision) }
    }
}
