import Foundation
internal import GRDB

/// Runs batches of commits in single transactions, and watches for changes by other processes.
///
/// Its mutable state is confined to `queue`, a private serial dispatch queue: `submit`,
/// `snapshot`, `startWatching` and `stopWatching` may be called from any thread and hop there;
/// everything else runs on it. That confinement is why the state needs no lock
/// (`@unchecked Sendable` for that reason only). Blocking work (SQLite, fsync) happens on
/// `queue`, never on a caller's thread or on Swift's cooperative pool.
final class StoreWriter: @unchecked Sendable {
    let database: DatabaseQueue
    let origin: String
    let queue = DispatchQueue(label: "tidings.store.writer", qos: .userInitiated)
    let commits = CommitQueue()
    private let changeRetention: UInt64
    /// Commits per transaction at most, so one transaction stays short even under a flood.
    private let batchLimit = 1024

    // Queue-confined state.
    /// The database's revision as of this writer's last look (own commit or external check).
    private var knownRevision: UInt64
    private var externalHandler: (@Sendable (ExternalChange) -> Void)?
    private var lastDataVersion: Int64?
    private var timer: (any DispatchSourceTimer)?
    /// Test-only fault injection: called inside each transaction just before COMMIT with the
    /// number of callers in it; throwing makes the transaction fail as a failed COMMIT would.
    var beforeCommit: ((Int) throws -> Void)?

    init(database: DatabaseQueue, origin: String, changeRetention: UInt64, revision: UInt64) {
        self.database = database
        self.origin = origin
        self.changeRetention = changeRetention
        self.knownRevision = revision
    }

    deinit {
        // A resumed timer source is not freed by dropping it; cancel it explicitly.
        timer?.cancel()
    }

    // MARK: Group commit

    func submit(_ commit: PendingCommit) {
        switch commits.admit(commit) {
        case .rejected: commit.continuation.resume(throwing: StoreError.closed)
        case .queued: break
        case .startDrain: queue.async { self.drain() }
        }
    }

    private func drain() {
        dispatchPrecondition(condition: .onQueue(queue))
        while let batch = commits.nextBatch(limit: batchLimit) {
            run(batch)
        }
    }

    /// Commits `batch` in one transaction, each caller inside its own savepoint so one caller's
    /// failing operation rolls back only that caller. If the transaction itself fails (I/O
    /// error, disk full), nothing in it is durable, so each caller is retried alone.
    private func run(_ batch: [PendingCommit]) {
        do {
            let (outcomes, external) = try transaction(batch)
            deliver(external)
            for (commit, outcome) in zip(batch, outcomes) {
                commit.continuation.resume(with: outcome)
            }
        } catch {
            if batch.count > 1 {
                for commit in batch { run([commit]) }
            } else {
                batch[0].continuation.resume(throwing: Self.storeError(error))
            }
        }
    }

    private func transaction(_ batch: [PendingCommit]) throws -> ([Result<[UInt64], any Error>], ExternalChange?) {
        var outcomes: [Result<[UInt64], any Error>] = []
        var external: ExternalChange?
        var committedCount = 0
        var operationCount = 0
        var revision: UInt64 = 0
        try database.writeWithoutTransaction { db in
            // IMMEDIATE: take the write lock first, so another process cannot slip a commit
            // between reading the counter and writing the next one.
            try db.inTransaction(.immediate) {
                revision = try db.storedRevision()
                external = try self.externalChanges(db, upTo: revision)
                for commit in batch {
                    var next = revision
                    var assigned: [UInt64] = []
                    do {
                        try db.inSavepoint {
                            for operation in commit.operations {
                                next += 1
                                try db.apply(operation, revision: next, origin: self.origin)
                                assigned.append(next)
                            }
                            return .commit
                        }
                        revision = next
                        committedCount += 1
                        operationCount += assigned.count
                        outcomes.append(.success(assigned))
                    } catch {
                        // Errors like SQLITE_FULL end the whole transaction; then the batch is
                        // retried caller by caller rather than continuing outside a transaction.
                        guard db.isInsideTransaction else { throw error }
                        outcomes.append(.failure(Self.storeError(error)))
                    }
                }
                try db.setStoredRevision(revision)
                try db.pruneChanges(upTo: revision, retention: self.changeRetention)
                try self.beforeCommit?(batch.count)
                return .commit
            }
        }
        knownRevision = revision
        commits.record(transactionOf: committedCount, operations: operationCount)
        return (outcomes, external)
    }

    static func storeError(_ error: any Error) -> any Error {
        if error is StoreError { return error }
        return StoreError.database(String(describing: error))
    }

    /// Reads everything; what it covers counts as seen, so watchers deliver only later changes.
    func snapshot() throws -> StoreSnapshot {
        try queue.sync {
            let snapshot = try database.read { try $0.readSnapshot() }
            knownRevision = max(knownRevision, snapshot.revision)
            return snapshot
        }
    }

    // MARK: External changes (another process sharing the file)

    /// Changes other writers committed between our last look and `revision`, read on `db`.
    private func externalChanges(_ db: Database, upTo revision: UInt64) throws -> ExternalChange? {
        guard revision > knownRevision, externalHandler != nil else { return nil }
        do {
            let changes = try db.readChanges(after: knownRevision, origin: origin, excludingOrigin: true)
            return changes.isEmpty ? nil : .changes(changes)
        } catch StoreError.changesPruned {
            return .reload(try db.readSnapshot())
        }
    }

    private func deliver(_ change: ExternalChange?) {
        if let change, let handler = externalHandler { handler(change) }
    }

    func startWatching(every interval: DispatchTimeInterval, handler: @escaping @Sendable (ExternalChange) -> Void) {
        queue.async {
            self.externalHandler = handler
            // No baseline: the first poll compares the revision with knownRevision, so commits
            // made by others since the last snapshot or local commit are delivered too.
            self.lastDataVersion = nil
            self.timer?.cancel()
            let timer = DispatchSource.makeTimerSource(queue: self.queue)
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(5))
            timer.setEventHandler { [weak self] in self?.poll() }
            timer.resume()
            self.timer = timer
        }
    }

    func stopWatching() {
        queue.sync {
            timer?.cancel()
            timer = nil
            externalHandler = nil
        }
    }

    /// `PRAGMA data_version` changes only when *another* connection commits, so an idle poll
    /// costs one pragma and reads nothing else.
    private func poll() {
        guard commits.isAcceptingCommits else { return }
        do {
            var external: ExternalChange?
            try database.inDatabase { db in
                let version = try Self.dataVersion(db)
                guard version != lastDataVersion else { return }
                // One read transaction, so the revision and the log entries agree.
                try db.inTransaction(.deferred) {
                    let revision = try db.storedRevision()
                    external = try externalChanges(db, upTo: revision)
                    knownRevision = max(knownRevision, revision)
                    return .commit
                }
                lastDataVersion = version
            }
            deliver(external)
        } catch {
            // A busy or failing read is retried on the next tick; nothing is lost because
            // the next look starts from knownRevision again.
        }
    }

    private static func dataVersion(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "PRAGMA data_version") ?? 0
    }
}

/// What another process sharing the database changed.
public enum ExternalChange: Sendable, Hashable {
    /// These changes, in revision order (none of them written by this store instance).
    case changes([StoredChange])
    /// This instance fell so far behind that the change log was pruned: replace your state
    /// with this snapshot.
    case reload(StoreSnapshot)
}
