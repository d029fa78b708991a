internal import GRDB

/// The SQLite table of the webhook outboxes: one cursor row per hook (``WebhookCursor``).
/// Registered under its own migration name, after the store's numbered ones.
enum WebhookSchema {
    static func register(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration("webhooks-v1") { db in
            try db.execute(sql: """
                CREATE TABLE webhook_cursor (
                    name TEXT PRIMARY KEY NOT NULL,
                    cursor INTEGER NOT NULL,
                    lastDelivered INTEGER,
                    state TEXT NOT NULL DEFAULT 'active',
                    attempts INTEGER NOT NULL DEFAULT 0,
                    nextAttempt INTEGER,
                    lastError TEXT,
                    failingSince INTEGER
                ) WITHOUT ROWID;
                """)
        }
    }
}
