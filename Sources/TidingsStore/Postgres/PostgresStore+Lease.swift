import Foundation
internal import PostgresNIO

extension PostgresStore {
    /// Takes or renews `name` for `holder` in one statement: the upsert only replaces a row
    /// held by `holder` or expired (by the database's clock, the one clock every instance
    /// shares), and says whether the row it replaced was another holder's expired one — a
    /// lease that holder never gave back (``LeaseTake/takenOver``).
    public func takeLease(_ name: String, holder: String, duration: Duration) async throws -> LeaseTake {
        let milliseconds = max(1, duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000)
        let graceSeconds = LeasePurge.grace.components.seconds
        let rows = try await withConnection(reader) { [logger] connection in
            // A row expired long ago is as good as none, and single-use names (stream tickets'
            // `ticket:<nonce>`) would otherwise pile up: a few are purged with every take. Not
            // this name's row, and none expired within the grace: a row another holder left when
            // it died is what tells a take-over apart from a free lease. SKIP LOCKED: never wait
            // on a row another instance is renewing.
            _ = try await connection.query("""
                DELETE FROM lease WHERE name IN
                  (SELECT name FROM lease WHERE expires < now() - \(graceSeconds)::bigint * interval '1 second' AND name <> \(name)
                   LIMIT \(LeasePurge.batch) FOR UPDATE SKIP LOCKED)
                """, logger: logger).collect()
            // `previous` reads the row as it stood when the statement began (the statement's
            // snapshot: the upsert's own change is not visible to it): another holder's row
            // that had expired is one that holder never gave back. Not locked (FOR UPDATE would
            // skip the row the upsert changes): a row that changed since — given back by a live
            // holder, or taken by another instance — is not counted as abandoned unless it was
            // already expired in the snapshot.
            return try await connection.query("""
                WITH previous AS (SELECT holder <> \(holder) AND expires < now() AS abandoned FROM lease WHERE name = \(name))
                INSERT INTO lease (name, holder, expires)
                VALUES (\(name), \(holder), now() + \(milliseconds)::bigint * interval '1 millisecond')
                ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
                 WHERE lease.holder = excluded.holder OR lease.expires < now()
                RETURNING lease.holder, coalesce((SELECT abandoned FROM previous), false)
                """, logger: logger).collect()
        }
        for row in rows {
            let (taker, abandoned) = try row.decode((String, Bool).self)
            guard taker == holder else { continue }
            return abandoned ? .takenOver : .taken
        }
        return .refused
    }

    public func releaseLease(_ name: String, holder: String) async throws {
        try await withConnection(reader) { [logger] connection in
            _ = try await connection.query("DELETE FROM lease WHERE name = \(name) AND holder = \(holder)", logger: logger).collect()
        }
    }
}
