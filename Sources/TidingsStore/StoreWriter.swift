import Foundation
internal import GRDB

/// Runs batches of commits in single transactions, and watches the file for other processes'
/// commits.
///
/// Its mutable state is confined to `queue`, a private serial dispatch queue: `submit`, `watch`
/// and `stopWatching` may be called from any thread and hop there; everything else runs on it.
/// That confinement is why the state needs no lock (`@unchecked Sendable` for that reason only);
/// the queue-confined entry points (`drain`, `poll`) check it with `dispatchPrecondition`.
/// Blocking work (SQLite, fsync) happens on `queue`, never on a caller's thread or on Swift's
/// cooperative pool.
final class StoreWriter: @unchecked Sendable {
    let database: DatabaseQueue
    /// Checkpoints the log beside the writer; held here because `database`'s WAL hook points to it.
    let checkpointer: WALCheckpointer
    let queue = DispatchQueue(label: "tidings.store.writer", qos: .userInitiated)
    let commits = CommitQueue()
    private let limits: ChangeStoreLimits
    /// Commits per transaction at most, so one transaction stays short even under a flood.
    private let batchLimit = 1024

    // Queue-confined state.
    private var doorbell: (@Sendable () -> Void)?
    private var lastDataVersion: Int64?
    private var timer: (any DispatchSourceTimer)?
    /// Test-only fault injection: called inside each transaction just before COMMIT with the
    /// number of callers in it; throwing makes the transaction fail as a failed COMMIT would.
    var beforeCommit: ((Int) throws -> Void)?

    /// The commit clock (records' `at`, retention by age); tests move it.
    private let clock: @Sendable () -> Date

    init(database: DatabaseQueue, checkpointer: WALCheckpointer, limits: ChangeStoreLimits,
         clock: @escaping @Sendable () -> Date = { Date() }) {
        self.database = database
        self.checkpointer = checkpointer
        self.limits = limits
        self.clock = clock
    }

    deinit {
        // A resumed timer source is not freed by dropping it; cancel it explicitly.
        timer?.cancel()
    }

    // MARK: Group commit

    func submit(_ commit: PendingCommit) {
        switch commits.admit(commit) {
        case .rejected: commit.answer(.failure(StoreError.closed))
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
    /// failing write rolls back only that caller. If the transaction itself fails (I/O error,
    /// disk full), nothing in it is durable, so each caller is retried alone.
    private func run(_ batch: [PendingCommit]) {
        do {
            let outcomes = try transaction(batch)
            for (commit, outcome) in zip(batch, outcomes) {
                commit.answer(outcome)
            }
        } catch {
            if batch.count > 1 {
                for commit in batch { run([commit]) }
            } else {
                batch[0].answer(.failure(Self.storeError(error)))
            }
        }
    }

    private func transaction(_ batch: [PendingCommit]) throws -> [Result<[Change], any Error>] {
        var outcomes: [Result<[Change], any Error>] = []
        var committedCount = 0
        var operationCount = 0
        try database.writeWithoutTransaction { db in
            // IMMEDIATE: take the write lock first, so another process cannot slip a commit
            // between reading the counter and writing the next one.
            try db.inTransaction(.immediate) {
                var revision = try db.storedRevision()
                let started = revision
                let now = Int64((self.clock().timeIntervalSince1970 * 1_000_000).rounded(.down))
                let at = try db.commitTime(now: now)
                for commit in batch {
                    let stamp = ChangeStamp(at: at, actor: commit.write.actor, reason: commit.write.reason)
                    var next = revision
                    var changes: [Change] = []
                    do {
                        try db.inSavepoint {
                            if let accepted = commit.write.expectedGlobalRevisions, !accepted.contains(next) {
                                throw StoreError.preconditionFailed(key: "", current: next)
                            }
                            let environment = commit.write.environment
                            if !commit.write.createsEnvironment, try !db.environmentExists(environment) {
                                throw StoreError.unknownEnvironment(environment)
                            }
                            try db.checkExpectedRevisions(commit.write.expectedRevisions, environment: environment)
                            for operation in commit.write.operations {
                                if let change = try db.apply(operation, revision: next + 1, stamp: stamp, environment: environment) {
                                    next += 1
                                    changes.append(change)
                                }
                            }
                            // A schedule's outcome commits with its write, or neither does.
                            if let schedule = commit.write.schedule {
                                try db.recordScheduleApplied(schedule, revision: next, at: at)
                            }
                            return .commit
                        }
                        revision = next
                        committedCount += 1
                        operationCount += changes.count
                        outcomes.append(.success(changes))
                    } catch {
                        // Errors like SQLITE_FULL end the whole transaction; then the batch is
                        // retried caller by caller rather than continuing outside a transaction.
                        guard db.isInsideTransaction else { throw error }
                        outcomes.append(.failure(Self.storeError(error)))
                    }
                }
                if operationCount > 0 {
                    try db.setStoredRevision(revision)
                    try db.setLastCommitTime(at)
                    if HistoryCheckpoints.crossed(from: started, to: revision) {
                        try db.writeCheckpoint(revision: revision)
                    }
                    try db.pruneHistory(self.limits, now: now)
                }
                try self.beforeCommit?(batch.count)
                return .commit
            }
        }
        commits.record(transactionOf: committedCount, operations: operationCount)
        return outcomes
    }

    static func storeError(_ error: any Error) -> any Error {
        if error is StoreError { return error }
        return StoreError.database(String(describing: error))
    }

    // MARK: Other processes' commits

    /// Rings `doorbell` whenever another connection committed (polling `PRAGMA data_version`,
    /// which changes only for *other* connections' commits, every `interval`; an idle poll
    /// reads nothing else).
    func watch(every interval: DispatchTimeInterval, doorbell: @escaping @Sendable () -> Void) {
        queue.async {
            self.doorbell = doorbell
            // The baseline is taken now, so a commit made right after `watch` returns rings.
            self.lastDataVersion = try? self.database.inDatabase { try Int64.fetchOne($0, sql: "PRAGMA data_version") }
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
            doorbell = nil
        }
    }

    private func poll() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard commits.isAcceptingCommits, let doorbell else { return }
        // Ten times a second for the life of the process, streams or not: the statement is
        // prepared once (made from SQL text each time, the poll was half of an idle server's CPU).
        let version = try? database.inDatabase { try Int64.fetchOne($0.cachedStatement(sql: "PRAGMA data_version")) }
        // A busy or failing read is retried on the next tick.
        guard let version, version != lastDataVersion else { return }
        lastDataVersion = version
        doorbell()
    }
}
