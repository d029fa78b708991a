import Foundation

/// One caller's `commit`: its write and the continuation that answers it.
struct PendingCommit: Sendable {
    let write: StoreWrite
    let continuation: CheckedContinuation<[Change], any Error>
}

/// The hand-off between callers (any thread) and the store's writer queue.
///
/// Callers append under a lock and return at once. The first caller to find the writer idle
/// asks it to drain; while the writer runs a transaction (and its fsync), later callers pile up
/// here and the writer takes them all as the next batch. That is the group commit: one fsync
/// for everything that arrived while the previous one ran.
///
/// `@unchecked Sendable` because all mutable state is guarded by `lock`.
final class CommitQueue: @unchecked Sendable {
    enum Admission { case rejected, startDrain, queued }

    private let lock = NSLock()
    private var pending: [PendingCommit] = []
    private var isDraining = false
    private var isClosed = false
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private var stats = StoreStatistics()

    /// Queues `commit`; `.startDrain` means the caller must schedule the writer.
    func admit(_ commit: PendingCommit) -> Admission {
        lock.lock()
        defer { lock.unlock() }
        if isClosed { return .rejected }
        pending.append(commit)
        if isDraining { return .queued }
        isDraining = true
        return .startDrain
    }

    /// Called by the writer: the next batch in submission order (at most `limit` commits), or
    /// `nil` when nothing is left — then the writer is marked idle and close() waiters wake.
    func nextBatch(limit: Int) -> [PendingCommit]? {
        lock.lock()
        if pending.isEmpty {
            isDraining = false
            let waiters = idleWaiters
            idleWaiters.removeAll()
            lock.unlock()
            for waiter in waiters { waiter.resume() }
            return nil
        }
        let count = min(limit, pending.count)
        let batch = Array(pending.prefix(count))
        pending.removeFirst(count)
        lock.unlock()
        return batch
    }

    /// Refuses new commits, then waits until every admitted commit has been answered.
    func closeAndDrain() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            lock.lock()
            isClosed = true
            if isDraining {
                idleWaiters.append(waiter)
                lock.unlock()
            } else {
                lock.unlock()
                waiter.resume()
            }
        }
    }

    /// Commits admitted and not yet taken by the writer.
    var pendingCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return pending.count
    }

    var isAcceptingCommits: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !isClosed
    }

    func record(transactionOf commits: Int, operations: Int) {
        lock.lock()
        stats.transactions += 1
        stats.commits += UInt64(commits)
        stats.operations += UInt64(operations)
        lock.unlock()
    }

    var statistics: StoreStatistics {
        lock.lock()
        defer { lock.unlock() }
        return stats
    }
}

/// Counters since the store was opened; `commits / transactions` is the group-commit factor.
public struct StoreStatistics: Sendable, Hashable {
    /// Write transactions committed (each one fsync of the WAL).
    public var transactions: UInt64 = 0
    /// `commit` calls acknowledged successfully.
    public var commits: UInt64 = 0
    /// Operations (revisions) written.
    public var operations: UInt64 = 0

    public init() {}
}
