import Foundation
internal import GRDB
import Synchronization

extension SQLiteStore: WebhookOutboxProvider {
    /// The outboxes on a connection of their own to the same file (``SQLiteWebhookOutbox``).
    public func webhookOutbox() throws -> any WebhookOutboxStore {
        do {
            return try SQLiteWebhookOutbox(path: writer.database.path)
        } catch {
            throw StoreWriter.storeError(error)
        }
    }
}

/// The webhook outboxes in SQLite, on a connection and a queue of their own: a cursor write
/// never waits in the writer's queue behind commits, nor a commit behind it. Its transactions
/// are `synchronous = NORMAL` — in WAL mode durable through a process crash or SIGKILL (the
/// frames are in the WAL file), only a power loss can take the last ones, and then a few
/// deliveries are made again (at least once, the same `webhook-id`); the next commit's fsync
/// covers them anyway. The table itself is made by the store's migrations (``WebhookSchema``).
final class SQLiteWebhookOutbox: WebhookOutboxStore {
    private let database: DatabaseQueue
    private let queue = DispatchQueue(label: "tidings.store.webhooks", qos: .utility)
    private let isClosed = Atomic<Bool>(false)

    init(path: String) throws {
        var configuration = Configuration()
        configuration.label = "tidings.store.webhooks"
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        database = try DatabaseQueue(path: path, configuration: configuration)
    }

    func webhookCursors() async throws -> [WebhookCursor] {
        try await run { db in
            try Row.fetchAll(db, sql: "SELECT * FROM webhook_cursor ORDER BY name").map(Self.cursor)
        }
    }

    func registerWebhook(_ name: String) async throws -> WebhookCursor {
        try await run(writing: true) { db in
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

    func saveWebhookCursor(_ cursor: WebhookCursor) async throws {
        try await run(writing: true) { db in
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

    func countChanges(after revision: UInt64, covered coverage: WebhookCoverage) async throws -> Int {
        try await run { db in
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
            var environments = ""
            if let names = coverage.environments {
                guard !names.isEmpty else { return 0 }
                environments = " AND environment IN (\(Array(repeating: "?", count: names.count).joined(separator: ",")))"
                arguments += names as [any DatabaseValueConvertible]
            }
            return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM change WHERE revision > ? AND (\(kinds.joined(separator: " OR ")))\(environments)",
                                    arguments: StatementArguments(arguments)) ?? 0
        }
    }

    func closeOutbox() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { [self] in
                if !isClosed.exchange(true, ordering: .acquiringAndReleasing) { try? database.close() }
                continuation.resume()
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

    /// `body` in an IMMEDIATE transaction: it takes the write lock at once (waiting up to the busy
    /// timeout for another writer), never upgrades a read lock half-way.
    private func write<T>(_ body: (Database) throws -> T) throws -> T {
        var result: T?
        try database.writeWithoutTransaction { db in
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
        }
        guard let result else { throw StoreError.database("a webhook outbox write produced nothing") }
        return result
    }

    /// `body` in one transaction (a write transaction when `writing`) on the outbox's own queue.
    private func run<T: Sendable>(writing: Bool = false, _ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [self] in
                do {
                    guard !isClosed.load(ordering: .acquiring) else { throw StoreError.closed }
                    continuation.resume(returning: try writing ? write(body) : database.read(body))
                } catch {
                    continuation.resume(throwing: StoreWriter.storeError(error))
                }
            }
        }
    }
}
