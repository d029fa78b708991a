import Foundation
internal import PostgresNIO

extension PostgresStore {
    /// Takes or renews `name` for `holder` in one statement: the upsert only replaces a row
    /// held by `holder` or expired (by the database's clock, the one clock every instance shares).
    public func acquireLease(_ name: String, holder: String, duration: Duration) async throws -> Bool {
        let milliseconds = max(1, duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000)
        let rows = try await withConnection(reader) { [logger] connection in
            try await connection.query("""
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
