import Foundation
import Logging
internal import PostgresNIO

/// Writes: ``commit(_:)`` checks what it can without the database, then queues the write for
/// group commit (``PostgresCommitQueue``); each batch is one call of the commit function. A
/// write that applies a schedule (``StoreWrite/schedule``) runs in a transaction of its own on
/// the same lane, with its schedule's outcome (``commitApplyingSchedule(_:on:)``).
extension PostgresStore {
    public func commit(_ write: StoreWrite) async throws -> [Change] {
        try checkUsable()
        if let refusal = write.unstorableReason ?? PostgresBatch.precheck(write) { throw refusal }
        return try await queue.submit(write) { [weak self] lane, writes in
            guard let self else { return writes.map { _ in .failure(.closed) } }
            return await self.commitBatch(writes, on: self.writers[lane])
        }
    }

    /// One batch of the queue: the writes without a schedule in one group-commit transaction,
    /// then each that applies a schedule in its own (answers in the writes' order).
    func commitBatch(_ writes: [StoreWrite], on writer: PostgresConnectionSlot) async -> [Result<[Change], StoreError>] {
        let scheduled = writes.indices.filter { writes[$0].schedule != nil }
        guard !scheduled.isEmpty else { return await commitGroup(writes, on: writer) }
        let plain = writes.indices.filter { writes[$0].schedule == nil }
        var results = [Result<[Change], StoreError>](repeating: .failure(.database("not committed")), count: writes.count)
        if !plain.isEmpty {
            for (index, result) in zip(plain, await commitGroup(plain.map { writes[$0] }, on: writer)) { results[index] = result }
        }
        for index in scheduled { results[index] = await commitApplyingSchedule(writes[index], on: writer) }
        return results
    }

    /// One group-commit transaction: `tidings_set_batch_v1` when every write of the batch is a
    /// plain set (``PostgresSetBatch``), else `tidings_commit_v3` with every write of the batch.
    func commitGroup(_ writes: [StoreWrite], on writer: PostgresConnectionSlot) async -> [Result<[Change], StoreError>] {
        logger.trace("commit batch", metadata: ["writes": "\(writes.count)"])
        do {
            let results: [Result<[Change], StoreError>]
            if let sets = PostgresSetBatch(writes) {
                let call = commitCall(payload: "")
                results = try await withConnection(writer) { [logger] connection in
                    try await Self.commitSets(sets, writes: writes, call: call, on: connection, logger: logger)
                }
            } else {
                let call = try commitCall(writes)
                let answer = try await withConnection(writer) { [logger] connection in
                    try await Self.answer(of: call, on: connection, logger: logger)
                }
                logger.trace("commit batch answered", metadata: ["bytes": "\(answer.utf8.count)"])
                results = try PostgresBatch.decode(answer, writes: writes)
            }
            for case let .failure(.database(message)) in results {
                logger.error("PostgreSQL rejected a write", metadata: ["error": "\(message)"])
            }
            return results
        } catch {
            let mapped = Self.storeError(error)
            if case .database = mapped {
                logger.error("PostgreSQL commit failed", metadata: ["error": "\(mapped)", "writes": "\(writes.count)"])
            }
            // The batch may have committed all the same (an answer lost or unreadable): its
            // notification is this store's own, which the watcher does not ring for, so ring
            // here and let the instance read what the table holds.
            ring()
            return writes.map { _ in .failure(mapped) }
        }
    }

    /// A write that applies a schedule, in one transaction with the schedule's outcome: the
    /// commit function's call, then `applied` with the revision it left the store at — only
    /// while the write's holder holds the schedule's claim and it is pending (else everything is
    /// rolled back: ``StoreError/scheduleNotHeld(_:)``). So the write and its schedule's
    /// outcome are durable together or not at all, and an instance that lost its claim (its
    /// lease ran out and another instance took it) can no longer apply it a second time.
    func commitApplyingSchedule(_ write: StoreWrite, on writer: PostgresConnectionSlot) async -> Result<[Change], StoreError> {
        guard let schedule = write.schedule else { return .failure(.database("no schedule to apply")) }
        do {
            let call = try commitCall([write])
            let keep = Int64(max(0, schedule.keepFinished))
            let changes = try await withConnection(writer) { [logger] connection -> [Change] in
                try await connection.query("BEGIN", logger: logger)
                do {
                    let answer = try await Self.answer(of: call, on: connection, logger: logger)
                    let changes = try PostgresBatch.decode(answer, writes: [write])[0].get()
                    let revision: Int64
                    if let last = changes.last {
                        revision = Int64(clamping: last.revision)
                    } else {
                        let rows = try await connection.query("SELECT revision FROM meta WHERE id = 1", logger: logger).collect()
                        revision = try rows.first?.decode(Int64.self) ?? 0
                    }
                    let finishedAt = changes.last?.at ?? call.now
                    let marked = try await connection.query("""
                        UPDATE schedule SET state = 'applied', revision = \(revision), detail = NULL, late = \(schedule.late),
                               finished_at = \(finishedAt), holder = NULL, claimed_until = NULL
                         WHERE id = \(schedule.id) AND state = 'pending' AND holder = \(schedule.holder)
                        RETURNING id
                        """, logger: logger).collect()
                    guard !marked.isEmpty else { throw StoreError.scheduleNotHeld(schedule.id) }
                    try await connection.query("""
                        DELETE FROM schedule WHERE state <> 'pending' AND id NOT IN
                            (SELECT id FROM schedule WHERE state <> 'pending' ORDER BY finished_at DESC, id LIMIT \(keep))
                        """, logger: logger)
                    try await connection.query("COMMIT", logger: logger)
                    return changes
                } catch {
                    // A connection that cannot roll back is closed, which rolls back too.
                    do { try await connection.query("ROLLBACK", logger: logger) } catch { try? await connection.close() }
                    throw error
                }
            }
            return .success(changes)
        } catch {
            let mapped = Self.storeError(error)
            if case .database = mapped {
                logger.error("PostgreSQL commit of a schedule's write failed", metadata: ["error": "\(mapped)", "schedule": "\(schedule.id)"])
            }
            ring()   // as in commitGroup: it may have committed all the same
            return .failure(mapped)
        }
    }

    /// The arguments of one call of the commit function for `writes`.
    struct CommitCall: Sendable {
        var payload: String
        var now: Int64
        var maxCount, maxBytes, maxAge, keepCount, keepBytes, every: Int64
    }

    func commitCall(_ writes: [StoreWrite]) throws -> CommitCall {
        commitCall(payload: try PostgresBatch.encode(writes))
    }

    /// The arguments of a commit call with `payload` as its batch (`tidings_set_batch_v1` takes none).
    func commitCall(payload: String) -> CommitCall {
        CommitCall(payload: payload,
                   now: Int64((Date().timeIntervalSince1970 * 1_000_000).rounded(.down)),
                   maxCount: Int64(max(0, min(limits.historyCount, Int(Int64.max)))),
                   maxBytes: Int64(max(0, limits.historyBytes)),
                   maxAge: limits.ageMicroseconds ?? -1,
                   keepCount: Int64(max(0, limits.keepCount)),
                   keepBytes: Int64(max(0, limits.keepBytes)),
                   every: Int64(HistoryCheckpoints.interval))
    }

    /// Calls the commit function; its JSON answer.
    static func answer(of call: CommitCall, on connection: PostgresConnection, logger: Logger) async throws -> String {
        let rows = try await connection.query(
            """
            SELECT tidings_commit_v3(\(call.payload)::jsonb, \(call.now), \(call.maxCount), \(call.maxBytes), \(call.maxAge),
                                     \(call.keepCount), \(call.keepBytes), \(call.every))::text
            """,
            logger: logger)
        var answer: String?
        for try await row in rows { answer = try row.decode(String?.self) }
        guard let answer else { throw StoreError.database("the commit function returned nothing") }
        return answer
    }
}
