import Foundation
import Synchronization

/// Group commit for ``PostgresStore``: concurrent ``submit(_:)`` calls queue up while batches
/// are in flight; each batch takes up to `maxBatch` of them into one transaction (one round
/// trip, one WAL flush).
///
/// Up to `lanes` batches may be in flight at once, each on its own connection: while one
/// commits, the next is already sent and waits at the database for the counter row's lock.
/// Revisions still follow commit order — the lock, not the lane, decides it. (One lane is the
/// default: measured here, more lanes made smaller batches and more WAL flushes.)
///
/// All mutable state lives in one `Mutex`, so the type is checked `Sendable`.
final class PostgresCommitQueue: Sendable {
    /// Runs one batch on lane `lane` and answers every write of it, in order.
    typealias Execute = @Sendable (_ lane: Int, _ writes: [StoreWrite]) async -> [Result<[Change], StoreError>]

    private struct Pending {
        var write: StoreWrite
        var continuation: CheckedContinuation<[Change], any Error>
    }

    private struct State {
        var pending: [Pending] = []
        var drainers: [Task<Void, Never>?]
        var closed = false
        var counters = PostgresStoreStatistics()
    }

    private let state: Mutex<State>
    private let maxBatch: Int

    init(maxBatch: Int, lanes: Int) {
        self.maxBatch = max(1, maxBatch)
        state = Mutex(State(drainers: Array(repeating: nil, count: max(1, lanes))))
    }

    /// Queues `write` and returns its changes once its batch committed. `execute` runs the
    /// batches if this write starts a lane (every caller passes the same function: it is an
    /// argument rather than a stored property only so the store can create its queue before
    /// `self` exists).
    func submit(_ write: StoreWrite, execute: @escaping Execute) async throws -> [Change] {
        try await withCheckedThrowingContinuation { continuation in
            let accepted: Bool = state.withLock { state in
                guard !state.closed else { return false }
                state.pending.append(Pending(write: write, continuation: continuation))
                // A free lane starts draining at once; otherwise a busy lane takes it next.
                if let lane = state.drainers.firstIndex(where: { $0 == nil }) {
                    state.drainers[lane] = Task { [weak self] in await self?.drain(lane: lane, execute: execute) }
                }
                return true
            }
            if !accepted { continuation.resume(throwing: StoreError.closed) }
        }
    }

    /// Batches and writes so far.
    var statistics: PostgresStoreStatistics { state.withLock { $0.counters } }

    /// Refuses new writes and waits until every queued one is answered.
    func close() async {
        let tasks: [Task<Void, Never>] = state.withLock { state in
            state.closed = true
            return state.drainers.compactMap { $0 }
        }
        for task in tasks { await task.value }
    }

    private func drain(lane: Int, execute: Execute) async {
        while true {
            let batch: [Pending] = state.withLock { [maxBatch] state in
                let batch = Array(state.pending.prefix(maxBatch))
                state.pending.removeFirst(batch.count)
                if batch.isEmpty {
                    state.drainers[lane] = nil
                } else {
                    state.counters.batches += 1
                    state.counters.writes += UInt64(batch.count)
                }
                return batch
            }
            if batch.isEmpty { return }
            let results = await execute(lane, batch.map(\.write))
            for (index, entry) in batch.enumerated() {
                let result = index < results.count
                    ? results[index] : .failure(.database("no result for a write of the batch"))
                entry.continuation.resume(with: result.mapError { $0 as any Error })
            }
        }
    }
}

/// Group-commit counters of a ``PostgresStore``.
public struct PostgresStoreStatistics: Sendable, Hashable {
    /// Transactions sent (one round trip and one WAL flush each).
    public var batches: UInt64 = 0
    /// Writes submitted in them.
    public var writes: UInt64 = 0
}
