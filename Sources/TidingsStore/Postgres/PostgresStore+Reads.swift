import Foundation
internal import PostgresNIO

/// The reads of the ``ChangeStore`` protocol, each one statement on the reader connection (so
/// each answer comes from one snapshot).
extension PostgresStore {
    public func loadSnapshot() async throws -> StoreSnapshot {
        let rows = try await withConnection(reader) { [logger] connection in
            try await connection.query("""
                SELECT 0::bigint, m.revision, 0::bigint, m.identity, NULL::text, NULL::text FROM meta m WHERE m.id = 1
                UNION ALL SELECT 1::bigint, p.revision, 0::bigint, p.key, p.value, p.environment FROM preference p
                UNION ALL SELECT 2::bigint, t.position, 0::bigint, t.text, NULL::text, t.environment FROM thing t
                UNION ALL SELECT 3::bigint, s.revision, 0::bigint, s.document, NULL::text, NULL::text FROM posts s
                UNION ALL SELECT 4::bigint, e.revision, e.things_revision, e.name, e.copied_from, e.created_at::text FROM environment e
                """, logger: logger).collect()
        }
        return try decode { try PostgresSnapshotRows.snapshot(from: rows) }
    }

    /// Also throws ``StoreError/changesPruned(oldestAvailable:)`` when the counter is below
    /// `revision`: the database went back (a restore, a failover that lost commits).
    public func changes(after revision: UInt64, limit: Int) async throws -> [Change] {
        guard limit > 0 else { return [] }
        return try await changePage(after: revision, limit: limit).changes(after: revision)
    }

    public func changePage(after revision: UInt64, limit: Int) async throws -> ChangePage {
        let after = Int64(min(revision, UInt64(Int64.max - 1)))
        let count = Int64(max(0, limit))
        let rows = try await withConnection(reader) { [logger] connection in
            // One statement, so the counter, the identity, the oldest row, the reader's row's
            // commit time and the rows come from one snapshot.
            try await connection.query("""
                SELECT 0::bigint, m.revision, (SELECT min(c.revision) FROM change c),
                       m.identity, NULL::text, NULL::text, NULL::text,
                       (SELECT c.at FROM change c WHERE c.revision = \(after) AND c.revision > 0),
                       NULL::text, NULL::text, NULL::text, NULL::text
                  FROM meta m WHERE m.id = 1
                UNION ALL
                (SELECT 1::bigint, c.revision, NULL::bigint, c.kind, c.op, c.subject, c.value, c.at, c.actor, c.reason, c.before,
                        c.environment
                   FROM change c WHERE c.revision > \(after) ORDER BY c.revision LIMIT \(count))
                """, logger: logger).collect()
        }
        return try decode { try PostgresSnapshotRows.changePage(from: rows, after: UInt64(after)) }
    }

    public func recentChanges(maxCount: Int, maxBytes: Int) async throws -> [Change] {
        guard maxCount > 0, maxBytes > 0 else { return [] }
        let rows = try await withConnection(reader) { [logger] connection in
            try await connection.query("""
                SELECT c.revision, c.kind, c.op, c.subject, c.value, c.at, c.actor, c.reason, c.before, c.environment FROM change c
                 ORDER BY c.revision DESC LIMIT \(Int64(maxCount))
                """, logger: logger).collect()
        }
        return try decode {
            var newestFirst: [Change] = []
            var bytes = 0
            for row in rows {
                let change = try PostgresHistoryRows.change(row)
                bytes += change.byteCount
                if bytes > maxBytes { break }
                newestFirst.append(change)
            }
            return newestFirst.reversed()
        }
    }

    /// Runs `body` turning decoding trouble into a logged ``StoreError/database(_:)``.
    func decode<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            let mapped = Self.storeError(error)
            if case .database = mapped {
                logger.error("unexpected data from PostgreSQL", metadata: ["error": "\(mapped)"])
            }
            throw mapped
        }
    }
}
