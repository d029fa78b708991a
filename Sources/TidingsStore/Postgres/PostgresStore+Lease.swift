import Foundation
internal import PostgresNIO

extension PostgresStore {
    /// Takes or renews `name` for `holder` in one statement: the upsert only replaces a row
    /// held by `holder` or expired (by the database's clock, the one clock every instance shares).
    public func acquireLease(_ name: String, holder: String, duration: Duration) async throws -> Bool {
        let milliseconds = max(1, duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000)
        let rows = try await withConnection(reader) { [logger] connection in
            // An expired row is as good as none (the upsert replaces it), and single-use names
            // (stream tickets' `ticket:<nonce>`) would otherwise pile up: a few are purged with
            // every lease taken, so they never grow unbounded. SKIP LOCKED: never wait on a row
            // another instance is renewing.
            try await connection.query("""
                DELETE FROM lease WHERE name IN
                  (SELECT name FROM lease WHERE expires < now() LIMIT 16 FOR UPDATE SKIP LOCKED)
                """, logger: logger).collect()
            return try await connection.query("""
                INSERT INTO lease (name, holder, expires)
                VALUES (\(name), \(holder), now() + \(milliseconds)::bigint * interval '1 millisecond')
                ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
                 WHERE lease.holder = excluded.holder OR lease.expires < now()
                RETURNING holder
                """, logger: logger).collect()
        }
        return try rows.contains { try $0.decode(String.self) == holder }
    }
}
