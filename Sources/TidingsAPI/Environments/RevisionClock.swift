import TidingsStore

/// The global revision the in-memory state reflects: the last change applied, in any
/// environment. One instance is shared by every environment's ``TidingsState``, so
/// `Tidings-Revision`, snapshots' ids and resume checks all use the one counter (API.md:
/// revisions stay one global counter).
@MainActor
final class RevisionClock {
    var revision: UInt64

    init(_ revision: UInt64) { self.revision = revision }
}

/// Hands out stream topic numbers, unique across every environment's ``StreamHub``: the stream
/// workers match a broadcast to its followers by number alone, so two environments' hubs must
/// never share one (a change in one would reach the other's streams).
@MainActor
final class TopicNumbers {
    private var last = -1

    init() {}

    func next() -> Int {
        last += 1
        return last
    }
}

/// What ``ChangeFeed`` applies committed changes to, strictly in revision order: one
/// environment's ``TidingsState``, or every environment's (``Environments``).
@MainActor
protocol AppliesChanges: AnyObject {
    /// The last revision applied.
    var revision: UInt64 { get }
    /// Another writer's change, typed where it comes in (its value decoded and checked once).
    func committed(_ change: Change) -> CommittedChange
    /// Applies `committed` when it is exactly the next revision (else false, nothing applied).
    func apply(_ committed: CommittedChange) -> Bool
    /// Rebuilds memory from `snapshot` (the history no longer reaches this instance's position).
    func reload(_ snapshot: StoreSnapshot)
}
