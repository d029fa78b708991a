import Foundation
import Synchronization
import TidingsStore

/// A ``ChangeStore`` held in memory whose history the test writes directly — what another
/// instance would have committed — so the change path's ordering and repair can be driven
/// without a database. Commits are numbered like a real store's (next revision, in call order).
final class ScriptedStore: ChangeStore, Sendable {
    private struct Script {
        var history: [Change] = []
        var snapshot: StoreSnapshot
        /// Changes at or below this revision are reported as pruned.
        var prunedThrough: UInt64 = 0
        var doorbell: (@Sendable () -> Void)?
        var reads = 0
        var rowsRead = 0
    }

    private let script: Mutex<Script>

    init(snapshot: StoreSnapshot = StoreSnapshot(revision: 0, preferences: [:], things: [], thingsRevision: 0)) {
        script = Mutex(Script(snapshot: snapshot))
    }

    /// How many times the change table was read.
    var reads: Int { script.withLock { $0.reads } }
    /// Changes the reads returned, in all.
    var rowsRead: Int { script.withLock { $0.rowsRead } }

    /// Appends what another writer committed and, unless `ring` is false, rings the doorbell.
    func append(_ changes: [Change], snapshot newSnapshot: StoreSnapshot? = nil, ring: Bool = true) {
        let doorbell = script.withLock { script in
            script.history += changes
            if let newSnapshot { script.snapshot = newSnapshot }
            return script.doorbell
        }
        if ring { doorbell?() }
    }

    /// Forgets history up to `revision` (as pruning would) and rings.
    func prune(through revision: UInt64, snapshot newSnapshot: StoreSnapshot) {
        let doorbell = script.withLock { script in
            script.prunedThrough = revision
            script.history.removeAll { $0.revision <= revision }
            script.snapshot = newSnapshot
            return script.doorbell
        }
        doorbell?()
    }

    func loadSnapshot() async throws -> StoreSnapshot { script.withLock { $0.snapshot } }

    func commit(_ write: StoreWrite) async throws -> [Change] {
        throw StoreError.unavailable("scripted store: commits are appended by the test")
    }

    func changes(after revision: UInt64, limit: Int) async throws -> [Change] {
        try script.withLock { script throws(StoreError) in
            script.reads += 1
            if revision < script.prunedThrough {
                throw StoreError.changesPruned(oldestAvailable: script.prunedThrough + 1)
            }
            let page = Array(script.history.filter { $0.revision > revision }.sorted { $0.revision < $1.revision }.prefix(limit))
            script.rowsRead += page.count
            return page
        }
    }

    func recentChanges(maxCount: Int, maxBytes: Int) async throws -> [Change] { [] }

    func watch(_ doorbell: @escaping @Sendable () -> Void) { script.withLock { $0.doorbell = doorbell } }

    var isAvailable: Bool { true }

    func close() async {}

    func takeLease(_ name: String, holder: String, duration: Duration) async throws -> LeaseTake { .taken }
    func releaseLease(_ name: String, holder: String) async throws {}

    /// The scripted store keeps no history of its own (the tests of history use SQLite).
    func history(_ query: HistoryQuery) async throws -> [Change] { [] }

    func state(asOf point: HistoryPoint, environment: String) async throws -> HistoricalState {
        throw StoreError.beyondHistory(oldestReadable: script.withLock { $0.snapshot.revision })
    }
}
