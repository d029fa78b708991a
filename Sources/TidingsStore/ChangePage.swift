/// A page of the change history read together with what says *which* history it is, in one
/// transaction: the database's identity and its revision counter, and when the change at the
/// reader's own revision was committed.
///
/// A reader that applied revision R can tell from it whether the database still holds the
/// history it applied: a database re-created, or another database put in its place, has
/// another ``identity``; one restored from an older backup, or a standby promoted after it
/// missed commits, has a ``counter`` below R, or — once new commits have taken the counter past R
/// again — another commit time at R (``committedAtReaderRevision``). Either way the reader must
/// rebuild from ``ChangeStore/loadSnapshot()``.
public struct ChangePage: Sendable, Hashable {
    /// The database's identity: a random UUID written once, when its schema was created (or
    /// when a database from before identities was first migrated). Nil when the store has none.
    public var identity: String?
    /// The store's revision counter (the newest committed revision).
    public var counter: UInt64
    /// ``Change/at`` of the change at the reader's revision, nil when that row is not retained
    /// (or the reader is at 0).
    public var committedAtReaderRevision: Int64?
    /// The changes after the reader's revision, oldest first (empty when the counter is not above it).
    public var changes: [Change]

    public init(identity: String?, counter: UInt64, committedAtReaderRevision: Int64?, changes: [Change]) {
        self.identity = identity
        self.counter = counter
        self.committedAtReaderRevision = committedAtReaderRevision
        self.changes = changes
    }
}

extension ChangeStore {
    /// For stores without identities (test doubles): the changes, and a counter no lower than
    /// the reader's revision, so only ``StoreError/changesPruned(oldestAvailable:)`` makes a reader reload.
    public func changePage(after revision: UInt64, limit: Int) async throws -> ChangePage {
        let changes = try await changes(after: revision, limit: limit)
        return ChangePage(identity: nil, counter: max(revision, changes.last?.revision ?? 0),
                          committedAtReaderRevision: nil, changes: changes)
    }
}

extension ChangePage {
    /// ``changes``, or ``StoreError/changesPruned(oldestAvailable:)`` when the counter is below
    /// `revision` (what ``ChangeStore/changes(after:limit:)`` answers: the reader must reload).
    func changes(after revision: UInt64) throws -> [Change] {
        if counter < revision { throw StoreError.changesPruned(oldestAvailable: counter + 1) }
        return changes
    }
}
