import Foundation

/// Group commit for ``PostgresStore``: concurrent ``submit(_:)`` calls queue up while a batch
/// is in flight; the next batch takes up to `maxBatch` of them into one transaction (one round
/// trip, one fsync), each write in its own subtransaction.
final class PostgresCommitQueue: @unchecked Sendable {
    typealias Execute = @Sendable ([StoreWrite]) async -> [Result<[Change], StoreError>]

    private struct Pending {
        var write: StoreWrite
        var continuation: CheckedContinuation<[Change], any Error>
    }

    private let lock = NSLock()
    private var pending: [Pending] = []
    private var drainer: Task<Void, Never>?
    private var closed = false
    private var counters = PostgresStoreStatistics()
    private let maxBatch: Int
    private let execute: Execute

    /// `execute` runs one batch and answers every write of it, in order.
    init(maxBatch: Int, execute: @escaping Execute) {
        self.maxBatch = max(1, maxBatch)
        self.execute = execute
    }

    /// Queues `write` and returns its changes once its batch committed.
    func submit(_ write: StoreWrite) async throws -> [Change] {
        try await withCheckedThrowingContinuation { continuation in
            let accepted: Bool = lock.withLock {
                guard !closed else { return false }
                pending.append(Pending(write: write, continuation: continuation))
                if drainer == nil {
                    drainer = Task { [weak self] in await self?.drain() }
                }
                return true
            }
            if !accepted { continuation.resume(throwing: StoreError.closed) }
        }
    }

    /// Batches and writes so far.
    var statistics: PostgresStoreStatistics { lock.withLock { counters } }

    /// Refuses new writes and waits until every queued one is answered.
    func close() async {
        let task: Task<Void, Never>? = lock.withLock {
            closed = true
            return drainer
        }
        await task?.value
    }

    private func drain() async {
        while true {
            let batch: [Pending] = lock.withLock {
                let batch = Array(pending.prefix(maxBatch))
                pending.removeFirst(batch.count)
                if batch.isEmpty {
                    drainer = nil
                } else {
                    counters.batches += 1
                    counters.writes += UInt64(batch.count)
                }
                return batch
            }
            if batch.isEmpty { return }
            let results = await execute(batch.map(\.write))
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
