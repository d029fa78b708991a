/// Version 3 of the PostgreSQL schema: the change table becomes the history (see the SQLite
/// schema's v4 for the same ideas). Each row says when (`at`, microseconds, never earlier than
/// the row before: `meta.last_at`), who (`actor`), why (`reason`) and what it replaced
/// (`before`); `checkpoint` holds the whole state every ``HistoryCheckpoints/interval``
/// revisions; `history_base` the state just before the oldest retained row, into which pruning
/// folds what it drops. `tidings_commit_v2` replaces `tidings_commit_v1` (which stays, so an
/// instance of the older build still running keeps committing; its rows get the defaults).
enum PostgresHistorySchema {
    /// New columns, indexes and tables (idempotent).
    static let tables: [String] = [
        "ALTER TABLE change ADD COLUMN IF NOT EXISTS at bigint NOT NULL DEFAULT 0",
        "ALTER TABLE change ADD COLUMN IF NOT EXISTS actor text NOT NULL DEFAULT ''",
        "ALTER TABLE change ADD COLUMN IF NOT EXISTS reason text",
        "ALTER TABLE change ADD COLUMN IF NOT EXISTS before text",
        "ALTER TABLE meta ADD COLUMN IF NOT EXISTS last_at bigint NOT NULL DEFAULT 0",
        "CREATE INDEX IF NOT EXISTS change_at ON change (at)",
        "CREATE INDEX IF NOT EXISTS change_subject ON change (subject, revision)",
        "CREATE TABLE IF NOT EXISTS checkpoint (revision bigint PRIMARY KEY, state jsonb NOT NULL)",
        """
        CREATE TABLE IF NOT EXISTS history_base (
            id smallint PRIMARY KEY CHECK (id = 1),
            revision bigint NOT NULL,
            state jsonb NOT NULL
        )
        """,
    ]

    /// Rows written before version 3 get the migration's time; the base starts at 0 when
    /// nothing was pruned yet, else at the current state (older rows cannot be read as of).
    static let data: [String] = [
        "UPDATE change SET at = (extract(epoch FROM clock_timestamp()) * 1000000)::bigint WHERE at = 0",
        "UPDATE meta SET last_at = GREATEST(last_at, (SELECT COALESCE(max(c.at), 0) FROM change c)) WHERE id = 1",
        """
        INSERT INTO history_base (id, revision, state)
        SELECT 1,
               CASE WHEN m.revision = 0 OR (SELECT min(c.revision) FROM change c) = 1 THEN 0 ELSE m.revision END,
               CASE WHEN m.revision = 0 OR (SELECT min(c.revision) FROM change c) = 1 THEN '{}'::jsonb
                    ELSE tidings_state_v1(m.last_at, m.things_revision) END
          FROM meta m WHERE m.id = 1 AND NOT EXISTS (SELECT 1 FROM history_base)
        """,
    ]

    static let functions: [String] = [stateFunction, thingsChangeFunction, applyFunction, commitFunction, asOfFunction]

    /// The current state as a checkpoint (`{"p", "t", "tr", "a"}`, see CheckpointState).
    static let stateFunction = """
        CREATE OR REPLACE FUNCTION tidings_state_v1(at bigint, things_rev bigint)
        RETURNS jsonb LANGUAGE sql STABLE AS $$
            SELECT jsonb_build_object(
                'p', (SELECT COALESCE(jsonb_object_agg(p.key, jsonb_build_object('v', p.value, 'r', p.revision)), '{}'::jsonb) FROM preference p),
                't', (SELECT COALESCE(jsonb_agg(t.text ORDER BY t.position), '[]'::jsonb) FROM thing t),
                'tr', things_rev, 'a', at)
        $$
        """

    static let thingsChangeFunction = """
        CREATE OR REPLACE FUNCTION tidings_things_change_v2(rev bigint, change_op text, thing_text text,
                                                            at bigint, actor text, why text, before_list text)
        RETURNS change LANGUAGE sql AS $$
            INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before)
            SELECT rev, 'things', change_op, thing_text,
                   COALESCE((SELECT json_agg(t.text ORDER BY t.position) FROM thing t)::text, '[]'),
                   32 + COALESCE(octet_length(convert_to(thing_text, 'UTF8')), 0)
                      + COALESCE((SELECT sum(octet_length(convert_to(t.text, 'UTF8')) + 3) FROM thing t), 0)
                      + octet_length(convert_to(actor, 'UTF8')) + COALESCE(octet_length(convert_to(why, 'UTF8')), 0)
                      + COALESCE(octet_length(convert_to(before_list, 'UTF8')), 0),
                   at, actor, why, before_list
            RETURNING *
        $$
        """
}
