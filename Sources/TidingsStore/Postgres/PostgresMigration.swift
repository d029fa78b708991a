import Logging
internal import PostgresNIO

/// Creates or migrates the schema at start. Several instances may start at once: a
/// session-level advisory lock lets one migrate while the others wait, and every statement is
/// idempotent anyway.
enum PostgresMigration {
    static func migrate(_ connection: PostgresConnection, logger: Logger) async throws {
        let key = PostgresSchema.migrationLockKey
        try await connection.query("SELECT pg_advisory_lock(\(key))", logger: logger)
        do {
            try await connection.query(PostgresQuery(unsafeSQL: PostgresSchema.versionTable), logger: logger)
            var found: Int64 = 0
            for try await (version) in try await connection.query(
                "SELECT version::bigint FROM schema_version WHERE id = 1", logger: logger
            ).decode(Int64.self) {
                found = version
            }
            if found > Int64(PostgresSchema.version) {
                throw StoreError.database(
                    "the database schema is version \(found), newer than this build knows (\(PostgresSchema.version))")
            }
            if found < Int64(PostgresSchema.version) {
                logger.info("migrating the PostgreSQL schema", metadata: ["from": "\(found)", "to": "\(PostgresSchema.version)"])
                let statements = found < 1 ? PostgresSchema.fromEmpty
                    : found < 4 ? PostgresSchema.fromVersion1 : found < 6 ? PostgresSchema.fromVersion4
                    : found < 7 ? PostgresSchema.fromVersion6 : found < 8 ? PostgresSchema.fromVersion7
                    : found < 9 ? PostgresSchema.fromVersion8 : PostgresSchema.fromVersion9
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                let version = Int64(PostgresSchema.version)
                try await connection.query("""
                    INSERT INTO schema_version (id, version) VALUES (1, \(version))
                    ON CONFLICT (id) DO UPDATE SET version = excluded.version
                    """, logger: logger)
            }
            // Tables kept beside the numbered schema (each statement idempotent).
            for statement in PostgresWebhookSchema.statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        } catch {
            _ = try? await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
            throw error
        }
        try await connection.query("SELECT pg_advisory_unlock(\(key))", logger: logger)
    }
}
