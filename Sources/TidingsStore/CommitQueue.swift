import Foundation
import Synchronization

/// One caller's `commit`: its write and how to answer it (called once, on the writer's queue).
struct PendingCommit: Sendable {
    let write: StoreWrite
    let answer: @Sendable (Result<[Change], any Error>) -> Void
}

/// The hand-off between callers (any thread) and the store's writer queue.
///
/// Callers append under a lock and return at once. The first caller to find the writer idle
/// asks it to drain; while the writer runs a transaction (and its fsync), later callers pile up
/// here and the writer takes them all as the next batch. That is the group commit: one fsync
/// for everything that arrived while the previous one ran.
///
/// All mutable state lives in one `Mutex`, so the type is checked `Sendable`.
final class CommitQueue: Sendable {
    enum Admission { case rejected, startDrain, queued }

    private struct State {
        var pending: [PendingCommit] = []
        var isDraining = false
        var isClosed = false
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
        var stats = StoreStatistics()
    }

    private let state = Mutex(State())

    /// Queues `commit`; `.startDrain` means the caller must schedule the writer.
    func admit(_ commit: PendingCommit) -> Admission {
        state.withLock { state in
            if state.isClosed { return .rejected }
            state.pending.append(commit)
            if state.isDraining { return .queued }
            state.isDraining = true
            return .startDrain
        }
    }

    /// Called by the writer: the next batch in submission order (at most `limit` commits), or
    /// `nil` when nothing is left — then the writer is marked idle and close() waiters wake.
    func nextBatch(limit: Int) -> [PendingCommit]? {
        let (batch, waiters): ([PendingCommit]?, [CheckedContinuation<Void, Never>]) = state.withLock { state in
            if state.pending.isEmpty {
                state.isDraining = false
                let waiters = state.idleWaiters
                state.idleWaiters.removeAll()
                return (nil, waiters)
            }
            let count = min(limit, state.pending.count)
            let batch = Array(state.pending.prefix(count))
            state.pending.removeFirst(count)
            return (batch, [])
        }
        // Resumed outside the lock: a waiter may run at once and call back in.
        for waiter in waiters { waiter.resume() }
        return batch
    }

    /// Refuses new commits, then waits until every admitted commit has been answered.
    func closeAndDrain() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let resumeNow: Bool = state.withLock { state in
                state.isClosed = true
                if state.isDraining {
                    state.idleWaiters.append(waiter)
                    return false
                }
                return true
            }
            if resumeNow { waiter.resume() }
        }
    }

    /// Commits admitted and not yet taken by the writer.
    var pendingCount: Int { state.withLock { $0.pending.count } }

    var isAcceptingCommits: Bool { state.withLock { !$0.isClosed } }

    func record(transactionOf commits: Int, operations: Int) {
        state.withLock { state in
            state.stats.transactions += 1
            state.stats.commits += UInt64(commits)
            state.stats.operations += UInt64(operations)
        }
    }

    var statistics: StoreStatistics { state.withLock { $0.stats } }
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
