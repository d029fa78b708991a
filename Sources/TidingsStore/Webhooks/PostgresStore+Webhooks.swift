import Foundation
internal import PostgresNIO

/// The webhook outboxes in PostgreSQL: one statement each, on the reader connection (like the
/// leases), so a slow receiver or a busy hook never queues behind the commit lanes.
extension PostgresStore: WebhookOutboxStore, WebhookOutboxProvider {
    /// The store itself: its reader connection carries the outboxes' statements.
    public func webhookOutbox() throws -> any WebhookOutboxStore { self }

    /// Nothing of its own to close (the store closes its connections).
    public func closeOutbox() async {}

    private static let columns = "name, cursor, last_delivered, state, attempts, next_attempt, last_error, failing_since"

    public func webhookCursors() async throws -> [WebhookCursor] {
        let rows = try await withConnection(reader) { [logger] connection in
            try await connection.query(PostgresQuery(unsafeSQL: "SELECT \(Self.columns) FROM webhook_cursor ORDER BY name"),
                                       logger: logger).collect()
        }
        return try decode { try rows.map(Self.cursor) }
    }

    public func registerWebhook(_ name: String) async throws -> WebhookCursor {
        let rows = try await withConnection(reader) { [logger] connection in
            // One statement: the row as it was, or the one made at the counter (a CTE's insert is
            // not visible to the same statement's SELECT, hence the UNION of both).
            try await connection.query("""
                WITH made AS (
                    INSERT INTO webhook_cursor (name, cursor) SELECT \(name), m.revision FROM meta m WHERE m.id = 1
                    ON CONFLICT (name) DO NOTHING
                    RETURNING name, cursor, last_delivered, state, attempts, next_attempt, last_error, failing_since
                )
                SELECT * FROM made
                UNION ALL
                SELECT name, cursor, last_delivered, state, attempts, next_attempt, last_error, failing_since
                  FROM webhook_cursor WHERE name = \(name)
                """, logger: logger).collect()
        }
        guard let row = rows.first else { throw StoreError.database("the webhook cursor of \(name) was not created") }
        return try decode { try Self.cursor(row) }
    }

    public func saveWebhookCursor(_ cursor: WebhookCursor) async throws {
        let position = Int64(clamping: cursor.cursor)
        let delivered = cursor.lastDelivered.map { Int64(clamping: $0) }
        let attempts = Int64(cursor.attempts)
        _ = try await withConnection(reader) { [logger] connection in
            try await connection.query("""
                INSERT INTO webhook_cursor (name, cursor, last_delivered, state, attempts, next_attempt, last_error, failing_since)
                VALUES (\(cursor.name), \(position), \(delivered), \(cursor.state.rawValue), \(attempts),
                        \(cursor.nextAttempt), \(cursor.lastError), \(cursor.failingSince))
                ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor, last_delivered = excluded.last_delivered,
                    state = excluded.state, attempts = excluded.attempts, next_attempt = excluded.next_attempt,
                    last_error = excluded.last_error, failing_since = excluded.failing_since
                """, logger: logger).collect()
        }
    }

    public func countChanges(after revision: UInt64, covered coverage: WebhookCoverage) async throws -> Int {
        guard coverage.preferences || coverage.things else { return 0 }
        let after = Int64(clamping: revision)
        let prefs = coverage.preferences
        let anyKey = coverage.keys == nil
        let keys = coverage.keys ?? []
        let things = coverage.things
        let everyEnvironment = coverage.environments == nil
        let environments = coverage.environments ?? []
        let rows = try await withConnection(reader) { [logger] connection in
            try await connection.query("""
                SELECT count(*)::bigint FROM change c
                 WHERE c.revision > \(after)
                   AND ((\(prefs) AND c.kind = 'preference' AND (\(anyKey) OR c.subject = ANY(\(keys))))
                        OR (\(things) AND c.kind = 'things'))
                   AND (\(everyEnvironment) OR c.environment = ANY(\(environments)))
                """, logger: logger).collect()
        }
        return try decode { Int(try rows.first?.decode(Int64.self) ?? 0) }
    }

    private static func cursor(_ row: PostgresRow) throws -> WebhookCursor {
        let (name, cursor, delivered, state, attempts, next, error, since) =
            try row.decode((String, Int64, Int64?, String, Int64, Int64?, String?, Int64?).self)
        return WebhookCursor(name: name, cursor: UInt64(max(0, cursor)), lastDelivered: delivered.map { UInt64(max(0, $0)) },
                             state: WebhookCursor.State(rawValue: state) ?? .active, attempts: Int(attempts),
                             nextAttempt: next, lastError: error, failingSince: since)
    }
}

/// The PostgreSQL table of the webhook outboxes, created (if missing) by every start under the
/// migration lock, beside the numbered schema: it adds a table and changes nothing else, so an
/// older build on the same database is unaffected.
enum PostgresWebhookSchema {
    static let statements = [
        """
        CREATE TABLE IF NOT EXISTS webhook_cursor (
            name text PRIMARY KEY,
            cursor bigint NOT NULL,
            last_delivered bigint,
            state text NOT NULL DEFAULT 'active',
            attempts bigint NOT NULL DEFAULT 0,
            next_attempt bigint,
            last_error text,
            failing_since bigint
        )
        """,
    ]
}
