import Foundation
internal import GRDB
import Synchronization

/// Schedules in the SQLite file (``ScheduleStore``): one table beside the change store's,
/// created by the first call. Every call runs on the writer's queue inside one IMMEDIATE
/// transaction, so a claim, a cancel and a finish never interleave (several processes sharing
/// the file serialise on SQLite's write lock).
extension SQLiteStore: ScheduleStore {
    static let scheduleTable = """
        CREATE TABLE IF NOT EXISTS schedule (
            id TEXT PRIMARY KEY NOT NULL,
            environment TEXT NOT NULL,
            at INTEGER NOT NULL,
            body TEXT NOT NULL,
            bytes INTEGER NOT NULL,
            createdBy TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            state TEXT NOT NULL,
            revision INTEGER,
            detail TEXT,
            late INTEGER NOT NULL DEFAULT 0,
            finishedAt INTEGER,
            holder TEXT,
            claimedUntil INTEGER
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS schedule_due ON schedule (state, at);
        """

    private static let columns = "id, environment, at, body, createdBy, createdAt, state, revision, detail, late, finishedAt"

    public func createSchedule(_ schedule: StoredSchedule, limits: ScheduleLimits) async throws {
        try await scheduleWrite { db in
            // In the write lock's transaction: a delete of the environment commits before or after, never between.
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM environment WHERE name = ?", arguments: [schedule.environment]) == true else {
                throw ScheduleStoreError.unknownEnvironment(schedule.environment)
            }
            let row = try Row.fetchOne(db, sql: "SELECT count(*) AS n, COALESCE(sum(bytes), 0) AS b FROM schedule WHERE state = 'pending'")
            let count: Int = row?["n"] ?? 0
            let bytes: Int = row?["b"] ?? 0
            if count >= limits.maxPending { throw ScheduleStoreError.tooManyPending(limit: limits.maxPending) }
            if bytes + schedule.body.utf8.count > limits.maxPendingBytes {
                throw ScheduleStoreError.tooManyPendingBytes(limit: limits.maxPendingBytes)
            }
            try db.execute(sql: """
                INSERT INTO schedule (id, environment, at, body, bytes, createdBy, createdAt, state)
                VALUES (?, ?, ?, ?, ?, ?, ?, 'pending')
                """, arguments: [schedule.id, schedule.environment, schedule.at, schedule.body, schedule.body.utf8.count,
                                 schedule.createdBy, schedule.createdAt])
        }
    }

    public func schedule(id: String) async throws -> StoredSchedule? {
        try await scheduleWrite { db in
            try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM schedule WHERE id = ?", arguments: [id]).map(Self.schedule)
        }
    }

    public func schedules(environment: String, state: StoredSchedule.State?, after: ScheduleCursor?, limit: Int) async throws -> [StoredSchedule] {
        try await scheduleWrite { db in
            try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM schedule WHERE environment = ? AND (? IS NULL OR state = ?)
                   AND (? IS NULL OR at > ? OR (at = ? AND id > ?))
                ORDER BY at, id LIMIT ?
                """, arguments: [environment, state?.rawValue, state?.rawValue,
                                 after?.at, after?.at, after?.at, after?.id, limit]).map(Self.schedule)
        }
    }

    public func cancelSchedule(id: String, now: Int64) async throws -> ScheduleCancellation {
        try await scheduleWrite { db in
            try db.execute(sql: """
                UPDATE schedule SET state = 'cancelled', finishedAt = ?
                WHERE id = ? AND state = 'pending' AND (claimedUntil IS NULL OR claimedUntil < ?)
                """, arguments: [now, id, now])
            let changed = db.changesCount > 0
            guard let found = try Row.fetchOne(db, sql: "SELECT \(Self.columns) FROM schedule WHERE id = ?", arguments: [id]).map(Self.schedule) else {
                return .notFound
            }
            return changed ? .cancelled(found) : .notPending(found)
        }
    }

    public func claimDueSchedules(now: Int64, holder: String, leaseMicroseconds: Int64, limit: Int) async throws -> [StoredSchedule] {
        try await scheduleWrite { db in
            let due = try Row.fetchAll(db, sql: """
                SELECT \(Self.columns) FROM schedule
                WHERE state = 'pending' AND at <= ? AND (claimedUntil IS NULL OR claimedUntil < ?)
                ORDER BY at, id LIMIT ?
                """, arguments: [now, now, limit]).map(Self.schedule)
            for schedule in due {
                try db.execute(sql: "UPDATE schedule SET holder = ?, claimedUntil = ? WHERE id = ?",
                               arguments: [holder, now + leaseMicroseconds, schedule.id])
            }
            return due
        }
    }

    public func finishSchedule(id: String, holder: String, state: StoredSchedule.State, revision: UInt64?, detail: String?,
                               late: Bool, now: Int64, limits: ScheduleLimits) async throws -> Bool {
        try await scheduleWrite { db in
            try db.execute(sql: """
                UPDATE schedule SET state = ?, revision = ?, detail = ?, late = ?, finishedAt = ?, holder = NULL, claimedUntil = NULL
                WHERE id = ? AND state = 'pending' AND holder = ?
                """, arguments: [state.rawValue, revision.map { Int64($0) }, detail, late, now, id, holder])
            let finished = db.changesCount > 0
            try Self.pruneFinishedSchedules(db, keep: limits.keepFinished)
            return finished
        }
    }

    public func releaseSchedule(id: String, holder: String) async throws {
        try await scheduleWrite { db in
            try db.execute(sql: "UPDATE schedule SET holder = NULL, claimedUntil = NULL WHERE id = ? AND holder = ? AND state = 'pending'",
                           arguments: [id, holder])
        }
    }

    public func nextScheduleTime() async throws -> Int64? {
        try await scheduleWrite { db in
            try Int64.fetchOne(db, sql: "SELECT min(at) FROM schedule WHERE state = 'pending'")
        }
    }

    /// Finished schedules are kept for reading, the newest `keep` of them.
    static func pruneFinishedSchedules(_ db: Database, keep: Int) throws {
        try db.execute(sql: """
            DELETE FROM schedule WHERE state <> 'pending' AND id NOT IN
                (SELECT id FROM schedule WHERE state <> 'pending' ORDER BY finishedAt DESC, id LIMIT ?)
            """, arguments: [keep])
    }

    private static func schedule(_ row: Row) -> StoredSchedule {
        let revision: Int64? = row["revision"]
        return StoredSchedule(id: row["id"], environment: row["environment"], at: row["at"], body: row["body"],
                              createdBy: row["createdBy"], createdAt: row["createdAt"],
                              state: StoredSchedule.State(rawValue: row["state"]) ?? .failed,
                              revision: revision.map { UInt64(max(0, $0)) }, detail: row["detail"], late: row["late"],
                              finishedAt: row["finishedAt"])
    }

    /// `body` in one write transaction on the writer's queue, the table created first if needed.
    private func scheduleWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writer.queue.async { [self, writer] in
                do {
                    // A closed file is never touched again (a late timer after shutdown).
                    guard !isClosed.load(ordering: .acquiring) else { throw StoreError.closed }
                    // IMMEDIATE: the write lock first, so a claim's read and update are one step
                    // against every other process sharing the file.
                    let result = try writer.database.writeWithoutTransaction { db -> T in
                        var result: T?
                        try db.inTransaction(.immediate) {
                            try db.execute(sql: Self.scheduleTable)
                            result = try body(db)
                            return .commit
                        }
                        return result!
                    }
                    continuation.resume(returning: result)
                } catch let error as ScheduleStoreError {
                    continuation.resume(throwing: error)
                } catch {
                    continuation.resume(throwing: StoreWriter.storeError(error))
                }
            }
        }
    }
}

extension Database {
    /// Inside the commit that deletes `environment`: its pending schedules become `cancelled`
    /// (claimed ones too: an instance applying one finds it no longer pending and its write
    /// refused for want of the environment).
    func cancelPendingSchedules(environment: String, at: Int64) throws {
        try execute(sql: SQLiteStore.scheduleTable)
        try execute(sql: """
            UPDATE schedule SET state = 'cancelled', finishedAt = ?, holder = NULL, claimedUntil = NULL
            WHERE environment = ? AND state = 'pending'
            """, arguments: [at, environment])
    }

    /// Inside a commit (``StoreWrite/schedule``): marks the schedule applied at `revision` —
    /// only while `completion.holder` holds its claim and it is pending, else the write fails
    /// with ``StoreError/scheduleNotHeld(_:)`` — and drops the oldest finished ones beyond the bound.
    func recordScheduleApplied(_ completion: ScheduleCompletion, revision: UInt64, at: Int64) throws {
        try execute(sql: SQLiteStore.scheduleTable)
        try execute(sql: """
            UPDATE schedule SET state = 'applied', revision = ?, detail = NULL, late = ?, finishedAt = ?,
                                holder = NULL, claimedUntil = NULL
            WHERE id = ? AND state = 'pending' AND holder = ?
            """, arguments: [Int64(clamping: revision), completion.late, at, completion.id, completion.holder])
        guard changesCount > 0 else { throw StoreError.scheduleNotHeld(completion.id) }
        try SQLiteStore.pruneFinishedSchedules(self, keep: completion.keepFinished)
    }
}
