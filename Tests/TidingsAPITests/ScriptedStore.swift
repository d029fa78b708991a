import Foundation
import TidingsStore

/// A ``ChangeStore`` held in memory whose history the test writes directly — what another
/// instance would have committed — so the change path's ordering and repair can be driven
/// without a database. Commits are numbered like a real store's (next revision, in call order).
final class ScriptedStore: ChangeStore, @unchecked Sendable {
    private let lock = NSLock()
    private var history: [Change] = []
    private var snapshot: StoreSnapshot
    /// Changes at or below this revision are reported as pruned.
    private var prunedThrough: UInt64 = 0
    private var doorbell: (@Sendable () -> Void)?
    private(set) var reads = 0

    init(snapshot: StoreSnapshot = StoreSnapshot(revision: 0, preferences: [:], things: [], thingsRevision: 0)) {
        self.snapshot = snapshot
    }

    /// Appends what another writer committed and, unless `ring` is false, rings the doorbell.
    func append(_ changes: [Change], snapshot newSnapshot: StoreSnapshot? = nil, ring: Bool = true) {
        lock.withLock {
            history += changes
            if let newSnapshot { snapshot = newSnapshot }
        }
        if ring { (lock.withLock { doorbell })?() }
    }

    /// Forgets history up to `revision` (as pruning would) and rings.
    func prune(through revision: UInt64, snapshot newSnapshot: StoreSnapshot) {
        lock.withLock {
            prunedThrough = revision
            history.removeAll { $0.revision <= revision }
            snapshot = newSnapshot
        }
        (lock.withLock { doorbell })?()
    }

    func loadSnapshot() async throws -> StoreSnapshot { lock.withLock { snapshot } }

    func commit(_ write: StoreWrite) async throws -> [Change] {
        throw StoreError.unavailable("scripted store: commits are appended by the test")
    }

    func changes(after revision: UInt64, limit: Int) async throws -> [Change] {
        try lock.withLock {
            reads += 1
            if revision < prunedThrough { throw StoreError.changesPruned(oldestAvailable: prunedThrough + 1) }
            return Array(history.filter { $0.revision > revision }.sorted { $0.revision < $1.revision }.prefix(limit))
        }
    }

    func recentChanges(maxCount: Int, maxBytes: Int) async throws -> [Change] { [] }

    func watch(_ doorbell: @escaping @Sendable () -> Void) { lock.withLock { self.doorbell = doorbell } }

    var isAvailable: Bool { true }

    func close() async {}

    func acquireLease(_ name: String, holder: String, duration: Duration) async throws -> Bool { true }

    /// The scripted store keeps no history of its own (the tests of history use SQLite).
    func history(_ query: HistoryQuery) async throws -> [Change] { [] }

    func state(asOf point: HistoryPoint, environment: String) async throws -> HistoricalState {
        throw StoreError.beyondHistory(oldestReadable: lock.withLock { snapshot.revision })
    }
}
