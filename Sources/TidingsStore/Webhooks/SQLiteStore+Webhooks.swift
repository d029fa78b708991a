import Foundation
internal import GRDB
import Synchronization

/// The webhook outboxes in SQLite: reads and writes on the writer's queue, like the leases.
/// A cursor write is one small transaction of its own (never part of a commit group).
extension SQLiteStore: WebhookOutboxStore {
    public func webhookCursors() async throws -> [WebhookCursor] {
        try await onWriterQueue { database in
            try database.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM webhook_cursor ORDER BY name").map(Self.cursor)
            }
        }
    }

    public func registerWebhook(_ name: String) async throws -> WebhookCursor {
        try await onWriterQueue { database in
            try database.write { db in
                // `WHERE true` keeps SQLite from reading ON CONFLICT as part of the SELECT.
                try db.execute(sql: """
                    INSERT INTO webhook_cursor (name, cursor) SELECT ?, revision FROM meta WHERE id = 1
                    ON CONFLICT (name) DO NOTHING
                    """, arguments: [name])
                guard let row = try Row.fetchOne(db, sql: "SELECT * FROM webhook_cursor WHERE name = ?", arguments: [name]) else {
                    throw StoreError.database("the webhook cursor of \(name) was not created")
                }
                return Self.cursor(row)
            }
        }
    }

    public func saveWebhookCursor(_ cursor: WebhookCursor) async throws {
        try await onWriterQueue { database in
            try database.write { db in
                try db.execute(sql: """
                    INSERT INTO webhook_cursor (name, cursor, lastDelivered, state, attempts, nextAttempt, lastError, failingSince)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (name) DO UPDATE SET cursor = excluded.cursor, lastDelivered = excluded.lastDelivered,
                        state = excluded.state, attempts = excluded.attempts, nextAttempt = excluded.nextAttempt,
                        lastError = excluded.lastError, failingSince = excluded.failingSince
                    """, arguments: [cursor.name, Int64(clamping: cursor.cursor), cursor.lastDelivered.map { Int64(clamping: $0) },
                                     cursor.state.rawValue, cursor.attempts, cursor.nextAttempt, cursor.lastError,
                                     cursor.failingSince])
            }
        }
    }

    public func countChanges(after revision: UInt64, covered coverage: WebhookCoverage) async throws -> Int {
        try await onWriterQueue { database in
            try database.read { db in
                var kinds: [String] = []
                var arguments: [any DatabaseValueConvertible] = [Int64(clamping: revision)]
                if coverage.preferences {
                    if let keys = coverage.keys {
                        if !keys.isEmpty {
                            kinds.append("(kind = 'preference' AND subject IN (\(Array(repeating: "?", count: keys.count).joined(separator: ","))))")
                            arguments += keys as [any DatabaseValueConvertible]
                        }
                    } else {
                        kinds.append("kind = 'preference'")
                    }
                }
                if coverage.things { kinds.append("kind = 'things'") }
                guard !kinds.isEmpty else { return 0 }
                return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM change WHERE revision > ? AND (\(kinds.joined(separator: " OR ")))",
                                        arguments: StatementArguments(arguments)) ?? 0
            }
        }
    }

    private static func cursor(_ row: Row) -> WebhookCursor {
        let delivered: Int64? = row["lastDelivered"]
        return WebhookCursor(
            name: row["name"], cursor: UInt64(max(0, row["cursor"] as Int64)), lastDelivered: delivered.map { UInt64(max(0, $0)) },
            state: WebhookCursor.State(rawValue: row["state"]) ?? .active, attempts: row["attempts"],
            nextAttempt: row["nextAttempt"], lastError: row["lastError"], failingSince: row["failingSince"])
    }

    /// `body` with the database on the writer's queue, off the caller's thread.
    private func onWriterQueue<T: Sendable>(_ body: @escaping @Sendable (DatabaseQueue) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writer.queue.async { [self, writer] in
                do {
                    guard !isClosed.load(ordering: .acquiring) else { throw StoreError.closed }
                    continuation.resume(returning: try body(writer.database))
                } catch {
                    continuation.resume(throwing: StoreWriter.storeError(error))
                }
            }
        }
    }
}
