internal import PostgresNIO

/// Server secrets in PostgreSQL (``ServerSecretStore``): the row is made if missing in one
/// statement (`ON CONFLICT DO NOTHING` waits for a concurrent insert of the same name and then
/// keeps it), then read, so every instance on the database gets the same secret however many
/// start at once.
extension PostgresStore: ServerSecretStore {
    public func streamTicketSecret() async throws -> [UInt8] {
        let fresh = Hex.string(ServerSecret.random())
        let name = ServerSecret.streamTickets
        let rows = try await withConnection(reader) { [logger] connection in
            _ = try await connection.query("INSERT INTO server_secret (name, value) VALUES (\(name), \(fresh)) ON CONFLICT (name) DO NOTHING",
                                       logger: logger).collect()
            return try await connection.query("SELECT value FROM server_secret WHERE name = \(name)", logger: logger).collect()
        }
        guard let stored = try rows.first?.decode(String.self), let bytes = ServerSecret.bytes(hex: stored) else {
            throw StoreError.database("the stored stream ticket secret is not \(ServerSecret.byteCount) bytes in hex")
        }
        return bytes
    }
}
