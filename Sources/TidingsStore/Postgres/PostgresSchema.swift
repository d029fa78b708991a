/// The PostgreSQL schema of ``PostgresStore`` and its migrations.
///
/// Version 1 created the tables; version 2 (re)creates the functions (one write per
/// `tidings_apply_v1` call, no subtransaction unless needed); version 3 is the history
/// (``PostgresHistorySchema``); version 4 gives the database its identity (`meta.identity`, a
/// random UUID written once, so an instance notices a re-created or replaced database); version 5
/// counts checkpoints against the history's bytes (`tidings_commit_v2` replaced in place); version 6 is
/// environments (``PostgresEnvironmentSchema``); version 7 creates the schedule table with the
/// schema (it was created by the first schedule call) so that `tidings_apply_v3`, replaced in
/// place, cancels a deleted environment's pending schedules in the delete's transaction; version 8
/// keeps server-wide secrets (`server_secret`, ``ServerSecretStore``: the stream tickets' key); version 9
/// commits a batch of plain sets in three statements (`tidings_sets_v1`, `tidings_commit_v3`
/// replaced in place); version 10 takes a batch of plain sets without `If-Match` as arrays and
/// answers it as rows (``PostgresSetBatchSchema``: `tidings_set_batch_v1`, `tidings_upkeep_v1`). A build refuses a database whose
/// version is newer than its own, so an older build never runs against functions it does not
/// know.
///
/// - `meta`: one row — the global revision counter (its row lock serialises committers, so
///   revisions are assigned in commit order), the things revision, and the running byte total
///   of the change history (so pruning never sums the table).
/// - `preference` (key, value JSON text or NULL = default, revision), `thing` (text, position),
///   `posts` (one row: document, revision).
/// - `change`: the history every instance tails — one row per revision, contiguous.
/// - `lease`: named leases with a holder and an expiry on the database's clock (one posts
///   refresh per cluster; see ``PostgresStore/takeLease(_:holder:duration:)``).
/// - `tidings_commit_v1(batch, max_count, max_bytes)`: applies a batch of writes in one
///   transaction (each through `tidings_apply_v1`) and returns what each did (see
///   ``PostgresBatch``).
enum PostgresSchema {
    /// The version this build creates and understands.
    static let version = 10
    /// Taken around migrations, so instances starting together migrate one at a time.
    static let migrationLockKey: Int64 = 0x7469_6469_6E67_7331  // "tidings1"
    /// The LISTEN/NOTIFY channel every commit notifies with its last revision.
    static let channel = "tidings_changes"

    static let versionTable = """
        CREATE TABLE IF NOT EXISTS schema_version (
            id smallint PRIMARY KEY CHECK (id = 1),
            version integer NOT NULL
        )
        """

    /// The statements that bring an empty database to the current version (each idempotent).
    static let fromEmpty: [String] = tables + fromVersion1

    /// What versions 2 and 3 changed from version 1: the functions, replaced in place (same
    /// names and signatures, so an instance of the older build still running keeps working),
    /// and the history (``PostgresHistorySchema``: new columns and tables, new functions).
    static let fromVersion1: [String] = functions + PostgresHistorySchema.tables + PostgresHistorySchema.functions
        + PostgresHistorySchema.data + identity + fromVersion4

    /// Versions 5 (checkpoints count against the history's bytes: the history functions
    /// replaced in place) and 6 (environments, ``PostgresEnvironmentSchema``).
    static let fromVersion4: [String] = PostgresHistorySchema.functions + PostgresEnvironmentSchema.statements + fromVersion6

    /// Version 7: the schedule table (as ``PostgresStore`` creates it, idempotently) and
    /// `tidings_apply_v3` again, now cancelling a deleted environment's pending schedules (same
    /// name and signature: an instance of the version-6 build still running keeps working).
    static let fromVersion6: [String] = [PostgresStore.scheduleTable, PostgresStore.scheduleIndex,
                                         PostgresEnvironmentSchema.applyFunction] + fromVersion7

    /// Version 8: server-wide secrets, one row each (hex text), made by the first instance that
    /// asks (``PostgresStore/streamTicketSecret()``).
    static let fromVersion7: [String] = [
        "CREATE TABLE IF NOT EXISTS server_secret (name text PRIMARY KEY, value text NOT NULL)",
    ] + fromVersion8

    /// Version 9: the batch-of-sets path (``PostgresEnvironmentSchema/setsFunction``) and the
    /// commit function that takes it, replaced in place (same name and signature: an instance
    /// of the version-8 build still running keeps working).
    static let fromVersion8: [String] = [PostgresEnvironmentSchema.setsFunction, PostgresEnvironmentSchema.commitFunction]
        + fromVersion9

    /// Version 10: the batch of sets as arrays (``PostgresSetBatchSchema``), beside the functions
    /// of version 9, which an instance of the version-9 build still running keeps using.
    static let fromVersion9: [String] = PostgresSetBatchSchema.statements

    /// Version 4: the identity, written once (a restore of this database's own dump brings its
    /// identity back with it; a new or another database has another one).
    static let identity: [String] = [
        "ALTER TABLE meta ADD COLUMN IF NOT EXISTS identity text",
        "UPDATE meta SET identity = gen_random_uuid()::text WHERE id = 1 AND identity IS NULL",
    ]

    static let functions = [thingsChangeFunction, applyFunction, commitFunction]

    static let tables: [String] = [
        """
        CREATE TABLE IF NOT EXISTS meta (
            id smallint PRIMARY KEY CHECK (id = 1),
            revision bigint NOT NULL CHECK (revision >= 0),
            things_revision bigint NOT NULL,
            history_bytes bigint NOT NULL
        )
        """,
        "INSERT INTO meta (id, revision, things_revision, history_bytes) VALUES (1, 0, 0, 0) ON CONFLICT (id) DO NOTHING",
        "CREATE TABLE IF NOT EXISTS preference (key text PRIMARY KEY, value text, revision bigint NOT NULL)",
        "CREATE TABLE IF NOT EXISTS thing (text text PRIMARY KEY, position bigint NOT NULL)",
        // Cluster-wide leases (one instance fetches the posts feed per refresh).
        "CREATE TABLE IF NOT EXISTS lease (name text PRIMARY KEY, holder text NOT NULL, expires timestamptz NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS posts (
            id smallint PRIMARY KEY CHECK (id = 1),
            document text NOT NULL,
            revision bigint NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS change (
            revision bigint PRIMARY KEY,
            kind text NOT NULL,
            op text NOT NULL,
            subject text,
            value text,
            bytes bigint NOT NULL
        )
        """,
    ]

    /// Records a change of the things list: the whole list after the change is stored in the
    /// row, so every instance rebuilds the exact event from the row alone.
    static let thingsChangeFunction = """
        CREATE OR REPLACE FUNCTION tidings_things_change_v1(rev bigint, change_op text, thing_text text)
        RETURNS change LANGUAGE sql AS $$
            INSERT INTO change (revision, kind, op, subject, value, bytes)
            SELECT rev, 'things', change_op, thing_text,
                   COALESCE((SELECT json_agg(t.text ORDER BY t.position) FROM thing t)::text, '[]'),
                   32 + COALESCE(octet_length(convert_to(thing_text, 'UTF8')), 0)
                      + COALESCE((SELECT sum(octet_length(convert_to(t.text, 'UTF8')) + 3) FROM thing t), 0)
            RETURNING *
        $$
        """
}
