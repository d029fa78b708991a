import Foundation
internal import PostgresNIO

/// Writes: ``commit(_:)`` checks what it can without the database, then queues the write for
/// group commit (``PostgresCommitQueue``); each batch is one call of the commit function.
extension PostgresStore {
    public func commit(_ write: StoreWrite) async throws -> [Change] {
        try checkUsable()
        if let refusal = write.unstorableReason ?? PostgresBatch.precheck(write) { throw refusal }
        return try await queue.submit(write) { [weak self] lane, writes in
            guard let self else { return writes.map { _ in .failure(.closed) } }
            return await self.commitBatch(writes, on: self.writers[lane])
        }
    }

    /// One group-commit transaction: `tidings_commit_v1` with every write of the batch.
    func commitBatch(_ writes: [StoreWrite], on writer: PostgresConnectionSlot) async -> [Result<[Change], StoreError>] {
        logger.trace("commit batch", metadata: ["writes": "\(writes.count)"])
        do {
            let payload = try PostgresBatch.encode(writes)
            let maxCount = Int64(max(0, min(limits.historyCount, Int(Int64.max))))
            let maxBytes = Int64(max(0, limits.historyBytes))
            let maxAge = limits.ageMicroseconds ?? -1
            let keepCount = Int64(max(0, limits.keepCount))
            let keepBytes = Int64(max(0, limits.keepBytes))
            let every = Int64(HistoryCheckpoints.interval)
            let now = Int64((Date().timeIntervalSince1970 * 1_000_000).rounded(.down))
            let answer = try await withConnection(writer) { [logger] connection in
                let rows = try await connection.query(
                    """
                    SELECT tidings_commit_v3(\(payload)::jsonb, \(now), \(maxCount), \(maxBytes), \(maxAge),
                                             \(keepCount), \(keepBytes), \(every))::text
                    """,
                    logger: logger)
                var answer: String?
                for try await row in rows { answer = try row.decode(String?.self) }
                guard let answer else { throw StoreError.database("the commit function returned nothing") }
                return answer
            }
            logger.trace("commit batch answered", metadata: ["bytes": "\(answer.utf8.count)"])
            let results = try PostgresBatch.decode(answer, writes: writes)
            for case let .failure(.database(message)) in results {
                logger.error("PostgreSQL rejected a write", metadata: ["error": "\(message)"])
            }
            return results
        } catch {
            let mapped = Self.storeError(error)
            if case .database = mapped {
                logger.error("PostgreSQL commit failed", metadata: ["error": "\(mapped)", "writes": "\(writes.count)"])
            }
            return writes.map { _ in .failure(mapped) }
        }
    }
}
