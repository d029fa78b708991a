internal import GRDB

/// The database schema, created and upgraded by GRDB's migrator. Append new migrations; never
/// edit a shipped one.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // One row holding the global revision counter. It is updated in the same
            // transaction as the changes it numbers, so it can never fall behind them.
            try db.execute(sql: """
                CREATE TABLE meta (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    revision INTEGER NOT NULL CHECK (revision >= 0),
                    thingsRevision INTEGER NOT NULL CHECK (thingsRevision >= 0)
                );
                INSERT INTO meta (id, revision, thingsRevision) VALUES (1, 0, 0);
                """)
            // value NULL = reset to default; the row keeps the reset's revision.
            try db.execute(sql: """
                CREATE TABLE preference (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT CHECK (value IS NULL OR json_valid(value)),
                    revision INTEGER NOT NULL
                ) WITHOUT ROWID;
                """)
            // position orders the list; both columns unique, so a bad write fails, never duplicates.
            try db.execute(sql: """
                CREATE TABLE thing (
                    text TEXT PRIMARY KEY NOT NULL,
                    position INTEGER NOT NULL UNIQUE
                ) WITHOUT ROWID;
                """)
            // The change log: one row per committed operation, keyed by its revision, so another
            // instance sharing the file can replay what it missed (the @CloudStorage idea).
            try db.execute(sql: """
                CREATE TABLE change (
                    revision INTEGER PRIMARY KEY,
                    origin TEXT NOT NULL,
                    op TEXT NOT NULL,
                    subject TEXT,
                    value TEXT
                );
                """)
        }
        return migrator
    }
}
