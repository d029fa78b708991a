import Foundation
import Synchronization
internal import PostgresNIO

/// Schedules in PostgreSQL (``ScheduleStore``): one table beside the change store's, created
/// once per database by the first call (under the migration lock: instances start together).
/// Each call is one statement, so a claim (`FOR UPDATE SKIP LOCKED`), a cancel and a finish
/// are atomic against every other instance.
extension PostgresStore: ScheduleStore {
    static let scheduleTable = """
        CREATE TABLE IF NOT EXISTS schedule (
            id text PRIMARY KEY,
            environment text NOT NULL,
            at bigint NOT NULL,
            body text NOT NULL,
            bytes bigint NOT NULL,
            created_by text NOT NULL,
            created_at bigint NOT NULL,
            state text NOT NULL,
            revision bigint,
            detail text,
            late boolean NOT NULL DEFAULT false,
            finished_at bigint,
            holder text,
            claimed_until bigint
        )
        """
    static let scheduleIndex = "CREATE INDEX IF NOT EXISTS schedule_due ON schedule (state, at)"
    private static let columns = "id, environment, at, body, created_by, created_at, state, revision, detail, late, finished_at"
    private static let qualifiedColumns = columns.split(separator: ",").map { "s." + $0.trimmingCharacters(in: .whitespaces) }
        .joined(separator: ", ")

    public func createSchedule(_ schedule: StoredSchedule, limits: ScheduleLimits) async throws {
        let bytes = Int64(schedule.body.utf8.count)
        let maxPending = Int64(limits.maxPending)
        let maxBytes = Int64(limits.maxPendingBytes)
        let rows = try await scheduleQuery { [logger] connection in
            // The environment's row is share-locked: a delete of it committing at the same moment
            // waits for this insert (and then cancels the schedule) or goes first (and nothing is inserted).
            try await connection.query("""
                WITH e AS (SELECT name FROM environment WHERE name = \(schedule.environment) FOR KEY SHARE)
                INSERT INTO schedule (id, environment, at, body, bytes, created_by, created_at, state)
                SELECT \(schedule.id), e.name, \(schedule.at), \(schedule.body), \(bytes),
                       \(schedule.createdBy), \(schedule.createdAt), 'pending' FROM e
                 WHERE (SELECT count(*) FROM schedule WHERE state = 'pending') < \(maxPending)
                   AND (SELECT COALESCE(sum(bytes), 0) FROM schedule WHERE state = 'pending') + \(bytes) <= \(maxBytes)
                RETURNING id
                """, logger: logger).collect()
        }
        guard rows.isEmpty else { return }
        let environments = try await scheduleQuery { [logger] connection in
            try await connection.query("SELECT 1 FROM environment WHERE name = \(schedule.environment)", logger: logger).collect()
        }
        if environments.isEmpty { throw ScheduleStoreError.unknownEnvironment(schedule.environment) }
        let counts = try await scheduleQuery { [logger] connection in
            try await connection.query("SELECT count(*)::bigint FROM schedule WHERE state = 'pending'", logger: logger).collect()
        }
        let pending = try counts.first?.decode(Int64.self) ?? 0
        if pending >= maxPending { throw ScheduleStoreError.tooManyPending(limit: limits.maxPending) }
        throw ScheduleStoreError.tooManyPendingBytes(limit: limits.maxPendingBytes)
    }

    public func schedule(id: String) async throws -> StoredSchedule? {
        let rows = try await scheduleQuery { [logger] connection in
            try await connection.query("SELECT \(unescaped: Self.columns) FROM schedule WHERE id = \(id)", logger: logger).collect()
        }
        return try rows.first.map(Self.schedule)
    }

    public func schedules(environment: String, state: StoredSchedule.State?, after: ScheduleCursor?, limit: Int) async throws -> [StoredSchedule] {
        let count = Int64(max(0, limit))
        let wanted = state?.rawValue
        let afterAt = after?.at
        let afterID = after?.id
        let rows = try await scheduleQuery { [logger] connection in
            try await connection.query("""
                SELECT \(unescaped: Self.columns) FROM schedule
                 WHERE environment = \(environment) AND (\(wanted)::text IS NULL OR state = \(wanted)::text)
                   AND (\(afterAt)::bigint IS NULL OR (at, id) > (\(afterAt)::bigint, \(afterID)::text))
                 ORDER BY at, id LIMIT \(count)
                """, logger: logger).collect()
        }
        return try rows.map(Self.schedule)
    }

    public func cancelSchedule(id: String, now: Int64) async throws -> ScheduleCancellation {
        let rows = try await scheduleQuery { [logger] connection in
            try await connection.query("""
                UPDATE schedule SET state = 'cancelled', finished_at = \(now)
                 WHERE id = \(id) AND state = 'pending' AND (claimed_until IS NULL OR claimed_until < \(now))
                RETURNING \(unescaped: Self.columns)
                """, logger: logger).collect()
        }
        if let row = rows.first { return .cancelled(try Self.schedule(row)) }
        guard let found = try await schedule(id: id) else { return .notFound }
        return .notPending(found)
    }

    public func claimDueSchedules(now: Int64, holder: String, leaseMicroseconds: Int64, limit: Int) async throws -> [StoredSchedule] {
        let until = now + leaseMicroseconds
        let count = Int64(max(0, limit))
        let rows = try await scheduleQuery { [logger] connection in
            // The due rows are chosen once (a materialised CTE): as `id IN (subquery)` the planner
            // may run the subquery again for each row, each time past the rows already claimed,
            // and so claim every due schedule whatever `limit` says.
            try await connection.query("""
                WITH due AS MATERIALIZED (
                    SELECT id FROM schedule
                     WHERE state = 'pending' AND at <= \(now) AND (claimed_until IS NULL OR claimed_until < \(now))
                     ORDER BY at, id LIMIT \(count) FOR UPDATE SKIP LOCKED)
                UPDATE schedule s SET holder = \(holder), claimed_until = \(until)
                  FROM due WHERE s.id = due.id
                RETURNING \(unescaped: Self.qualifiedColumns)
                """, logger: logger).collect()
        }
        return try rows.map(Self.schedule).sorted { ($0.at, $0.id) < ($1.at, $1.id) }
    }

    public func finishSchedule(id: String, holder: String, state: StoredSchedule.State, revision: UInt64?, detail: String?,
                               late: Bool, now: Int64, limits: ScheduleLimits) async throws -> Bool {
        let revision = revision.map { Int64(min($0, UInt64(Int64.max))) }
        let keep = Int64(limits.keepFinished)
        let rows = try await scheduleQuery { [logger] connection in
            try await connection.query("""
                UPDATE schedule SET state = \(state.rawValue), revision = \(revision), detail = \(detail), late = \(late),
                       finished_at = \(now), holder = NULL, claimed_until = NULL
                 WHERE id = \(id) AND state = 'pending' AND holder = \(holder)
                RETURNING id
                """, logger: logger).collect()
        }
        _ = try await scheduleQuery { [logger] connection in
            try await connection.query("""
                DELETE FROM schedule WHERE state <> 'pending' AND id NOT IN
                    (SELECT id FROM schedule WHERE state <> 'pending' ORDER BY finished_at DESC, id LIMIT \(keep))
                """, logger: logger).collect()
        }
        return !rows.isEmpty
    }

    public func releaseSchedule(id: String, holder: String) async throws {
        _ = try await scheduleQuery { [logger] connection in
            try await connection.query("""
                UPDATE schedule SET holder = NULL, claimed_until = NULL WHERE id = \(id) AND holder = \(holder) AND state = 'pending'
                """, logger: logger).collect()
        }
    }

    public func nextScheduleTime() async throws -> Int64? {
        let rows = try await scheduleQuery { [logger] connection in
            try await connection.query("SELECT min(at) FROM schedule WHERE state = 'pending'", logger: logger).collect()
        }
        return try rows.first?.decode(Int64?.self) ?? nil
    }

    private static func schedule(_ row: PostgresRow) throws -> StoredSchedule {
        let (id, environment, at, body, createdBy, createdAt, state, revision, detail, late, finishedAt) =
            try row.decode((String, String, Int64, String, String, Int64, String, Int64?, String?, Bool, Int64?).self)
        return StoredSchedule(id: id, environment: environment, at: at, body: body, createdBy: createdBy, createdAt: createdAt,
                              state: StoredSchedule.State(rawValue: state) ?? .failed,
                              revision: revision.map { UInt64(max(0, $0)) }, detail: detail, late: late, finishedAt: finishedAt)
    }

    /// Runs `body` on the reader connection, once the table exists.
    private func scheduleQuery<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let key = "\(url.host):\(url.port)/\(url.database)"
        if !Self.scheduleTablesReady.withLock({ $0.contains(key) }) {
            try await withConnection(reader) { [logger] connection in
                let lock = PostgresSchema.migrationLockKey
                try await connection.query("SELECT pg_advisory_lock(\(lock))", logger: logger)
                do {
                    try await connection.query(PostgresQuery(unsafeSQL: Self.scheduleTable), logger: logger)
                    try await connection.query(PostgresQuery(unsafeSQL: Self.scheduleIndex), logger: logger)
                } catch {
                    _ = try? await connection.query("SELECT pg_advisory_unlock(\(lock))", logger: logger)
                    throw error
                }
                try await connection.query("SELECT pg_advisory_unlock(\(lock))", logger: logger)
            }
            Self.scheduleTablesReady.withLock { _ = $0.insert(key) }
        }
        do {
            return try await withConnection(reader, body)
        } catch {
            // A database replaced under this process (a restore) may lack the table: make sure again next time.
            Self.scheduleTablesReady.withLock { _ = $0.remove(key) }
            throw error
        }
    }

    /// The databases whose schedule table this process has made sure of.
    private static let scheduleTablesReady = Mutex<Set<String>>([])
}
