import Foundation
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
        // v2: the change table becomes the one ordered history every reader tails and replays
        // from (each row complete enough to rebuild its event), bounded by bytes as well as by
        // count (running total in meta); the posts document is stored like any other state.
        migrator.registerMigration("v2") { db in
            try db.execute(sql: """
                DROP TABLE change;
                CREATE TABLE change (
                    revision INTEGER PRIMARY KEY,
                    kind TEXT NOT NULL,
                    op TEXT,
                    subject TEXT,
                    value TEXT,
                    bytes INTEGER NOT NULL
                );
                CREATE TABLE posts (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    document TEXT NOT NULL,
                    revision INTEGER NOT NULL
                );
                ALTER TABLE meta ADD COLUMN historyBytes INTEGER NOT NULL DEFAULT 0;
                """)
        }
        // v3: cluster-wide leases (one instance fetches the posts feed per refresh).
        migrator.registerMigration("v3") { db in
            try db.execute(sql: """
                CREATE TABLE lease (
                    name TEXT PRIMARY KEY NOT NULL,
                    holder TEXT NOT NULL,
                    expires REAL NOT NULL
                ) WITHOUT ROWID;
                """)
        }
        // v4: the change table becomes the history — each row says when (`at`, microseconds,
        // never earlier than the row before: meta.lastAt), who (`actor`), why (`reason`) and
        // what it replaced (`before`). Checkpoints of the whole state every
        // HistoryCheckpoints.interval revisions keep as-of reads short; `history_base` is the
        // state just before the oldest retained row (what pruning folded away). Rows from
        // before this migration get the migration's time and an empty actor; when older rows
        // were already pruned, as-of reads start at the current revision.
        migrator.registerMigration("v4") { db in
            let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
            try db.execute(sql: """
                ALTER TABLE change ADD COLUMN at INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE change ADD COLUMN actor TEXT NOT NULL DEFAULT '';
                ALTER TABLE change ADD COLUMN reason TEXT;
                ALTER TABLE change ADD COLUMN before TEXT;
                ALTER TABLE meta ADD COLUMN lastAt INTEGER NOT NULL DEFAULT 0;
                CREATE INDEX change_at ON change (at);
                CREATE INDEX change_subject ON change (subject, revision);
                CREATE TABLE checkpoint (revision INTEGER PRIMARY KEY, state TEXT NOT NULL);
                CREATE TABLE history_base (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    revision INTEGER NOT NULL,
                    state TEXT NOT NULL
                );
                """)
            try db.execute(sql: "UPDATE change SET at = ?", arguments: [now])
            try db.execute(sql: "UPDATE meta SET lastAt = ? WHERE revision > 0", arguments: [now])
            let oldest = try Int64.fetchOne(db, sql: "SELECT MIN(revision) FROM change")
            let revision = try db.storedRevision()
            if oldest == 1 || (oldest == nil && revision == 0) {
                try db.execute(sql: "INSERT INTO history_base (id, revision, state) VALUES (1, 0, '{}')")
            } else {
                var base = try db.legacyCheckpointState()
                base.a = now
                try db.execute(sql: "INSERT INTO history_base (id, revision, state) VALUES (1, ?, ?)",
                               arguments: [Int64(revision), base.json])
            }
        }
        // v5: the database's identity, a random UUID written once (here, for a new file too),
        // so that an instance notices when the file it reads is not the history it applied.
        migrator.registerMigration("v5") { db in
            try db.execute(sql: "ALTER TABLE meta ADD COLUMN identity TEXT")
            try db.execute(sql: "UPDATE meta SET identity = ? WHERE id = 1", arguments: [UUID().uuidString.lowercased()])
        }
        // v6: environments (API.md "Environments"). Values, things, history rows, checkpoints
        // and the history base are keyed by environment; what the file held is `default`. The
        // revision counter stays global. `environment` lists them, with the things revision and
        // the latest change of each (meta.thingsRevision is no longer kept).
        migrator.registerMigration("v6") { db in
            let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
            try db.execute(sql: """
                CREATE TABLE environment (
                    name TEXT PRIMARY KEY NOT NULL,
                    createdAt INTEGER NOT NULL,
                    copiedFrom TEXT,
                    thingsRevision INTEGER NOT NULL DEFAULT 0,
                    revision INTEGER NOT NULL DEFAULT 0
                ) WITHOUT ROWID;
                INSERT INTO environment (name, createdAt, thingsRevision, revision)
                    SELECT 'default', ?, thingsRevision,
                           MAX(thingsRevision, COALESCE((SELECT MAX(revision) FROM preference), 0)) FROM meta WHERE id = 1;
                CREATE TABLE preference_v6 (
                    environment TEXT NOT NULL,
                    key TEXT NOT NULL,
                    value TEXT CHECK (value IS NULL OR json_valid(value)),
                    revision INTEGER NOT NULL,
                    PRIMARY KEY (environment, key)
                ) WITHOUT ROWID;
                INSERT INTO preference_v6 (environment, key, value, revision) SELECT 'default', key, value, revision FROM preference;
                DROP TABLE preference;
                ALTER TABLE preference_v6 RENAME TO preference;
                CREATE TABLE thing_v6 (
                    environment TEXT NOT NULL,
                    text TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    PRIMARY KEY (environment, text),
                    UNIQUE (environment, position)
                ) WITHOUT ROWID;
                INSERT INTO thing_v6 (environment, text, position) SELECT 'default', text, position FROM thing;
                DROP TABLE thing;
                ALTER TABLE thing_v6 RENAME TO thing;
                ALTER TABLE change ADD COLUMN environment TEXT NOT NULL DEFAULT 'default';
                CREATE INDEX change_environment ON change (environment, revision);
                CREATE TABLE checkpoint_v6 (
                    revision INTEGER NOT NULL,
                    environment TEXT NOT NULL,
                    state TEXT NOT NULL,
                    PRIMARY KEY (environment, revision)
                );
                INSERT INTO checkpoint_v6 (revision, environment, state) SELECT revision, 'default', state FROM checkpoint;
                DROP TABLE checkpoint;
                ALTER TABLE checkpoint_v6 RENAME TO checkpoint;
                CREATE TABLE history_base_v6 (
                    environment TEXT PRIMARY KEY NOT NULL,
                    revision INTEGER NOT NULL,
                    state TEXT NOT NULL
                );
                INSERT INTO history_base_v6 (environment, revision, state) SELECT 'default', revision, state FROM history_base;
                DROP TABLE history_base;
                ALTER TABLE history_base_v6 RENAME TO history_base;
                """, arguments: [now])
        }
        WebhookSchema.register(in: &migrator)
        // v7: server-wide secrets (``ServerSecretStore``), one row each, made by the first
        // instance that asks (the stream tickets' key replaced keys derived from credentials).
        migrator.registerMigration("v7") { db in
            try db.execute(sql: """
                CREATE TABLE server_secret (
                    name TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                ) WITHOUT ROWID
                """)
        }
        return migrator
    }
}
