internal import PostgresNIO

extension PostgresStore {
    /// Takes or renews the lease `name` for `holder` (e.g. this instance's id) for `duration`;
    /// true when `holder` holds it now. Another holder gets it only once it expired. Expiry is
    /// judged on the database's clock, so clock skew between instances does not matter.
    ///
    /// For work one instance should do for the whole cluster, such as fetching the posts feed
    /// once per refresh: the lease holder fetches and commits the document
    /// (``WriteOperation/setPosts(_:)``), and every instance serves what the change brings.
    ///
    /// - Throws: ``StoreError/unavailable(_:)`` while the database cannot be reached.
    public func acquireLease(_ name: String, holder: String, for duration: Duration) async throws -> Bool {
        let milliseconds = max(1, duration.nanoseconds / 1_000_000)
        let rows = try await withConnection(reader) { [logger] connection in
            try await connection.query("""
                INSERT INTO lease AS l (name, holder, expires)
                VALUES (\(name), \(holder), clock_timestamp() + \(milliseconds) * interval '1 millisecond')
                ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
                 WHERE l.expires < clock_timestamp() OR l.holder = excluded.holder
                RETURNING l.holder
                """, logger: logger).collect()
        }
        return !rows.isEmpty
    }
}
