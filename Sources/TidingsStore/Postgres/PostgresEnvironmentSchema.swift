/// Version 5 of the PostgreSQL schema: environments (API.md "Environments"; the SQLite schema's
/// v6 holds the same ideas). Values, things, history rows, checkpoints and the history base are
/// keyed by environment, what the database held becomes `default`, and `environment` lists
/// them with each one's things revision and latest change. The revision counter stays global.
/// `tidings_commit_v3`, `tidings_apply_v3`, `tidings_as_of_v2` and `tidings_state_v2` succeed the
/// earlier functions (which no longer fit the keys: an instance of an older build must stop).
enum PostgresEnvironmentSchema {
    static let statements: [String] = [migration] + [stateFunction, thingsChangeFunction, applyFunction,
                                                     setsFunction, commitFunction, asOfFunction]

    /// The tables, once (the block does nothing when `environment` exists already).
    static let migration = """
        DO $$
        BEGIN
            IF EXISTS (SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = 'environment') THEN
                RETURN;
            END IF;
            CREATE TABLE environment (
                name text PRIMARY KEY,
                created_at bigint NOT NULL,
                copied_from text,
                things_revision bigint NOT NULL DEFAULT 0,
                revision bigint NOT NULL DEFAULT 0
            );
            INSERT INTO environment (name, created_at, things_revision, revision)
                SELECT 'default', (extract(epoch FROM clock_timestamp()) * 1000000)::bigint, m.things_revision,
                       GREATEST(m.things_revision, COALESCE((SELECT max(p.revision) FROM preference p), 0))
                  FROM meta m WHERE m.id = 1;
            ALTER TABLE preference ADD COLUMN environment text NOT NULL DEFAULT 'default';
            ALTER TABLE preference DROP CONSTRAINT preference_pkey;
            ALTER TABLE preference ADD PRIMARY KEY (environment, key);
            ALTER TABLE thing ADD COLUMN environment text NOT NULL DEFAULT 'default';
            ALTER TABLE thing DROP CONSTRAINT thing_pkey;
            ALTER TABLE thing ADD PRIMARY KEY (environment, text);
            ALTER TABLE change ADD COLUMN environment text NOT NULL DEFAULT 'default';
            CREATE INDEX change_environment ON change (environment, revision);
            ALTER TABLE checkpoint ADD COLUMN environment text NOT NULL DEFAULT 'default';
            ALTER TABLE checkpoint DROP CONSTRAINT checkpoint_pkey;
            ALTER TABLE checkpoint ADD PRIMARY KEY (environment, revision);
            ALTER TABLE history_base ADD COLUMN environment text NOT NULL DEFAULT 'default';
            ALTER TABLE history_base DROP CONSTRAINT history_base_pkey;
            ALTER TABLE history_base DROP CONSTRAINT IF EXISTS history_base_id_check;
            ALTER TABLE history_base ALTER COLUMN id SET DEFAULT 1;
            ALTER TABLE history_base ADD PRIMARY KEY (environment);
        END
        $$
        """

    /// One environment's current state as a checkpoint (`{"p", "t", "tr", "a"}`).
    static let stateFunction = """
        CREATE OR REPLACE FUNCTION tidings_state_v2(at bigint, env text)
        RETURNS jsonb LANGUAGE sql STABLE AS $$
            SELECT jsonb_build_object(
                'p', (SELECT COALESCE(jsonb_object_agg(p.key, jsonb_build_object('v', p.value, 'r', p.revision)), '{}'::jsonb)
                        FROM preference p WHERE p.environment = env),
                't', (SELECT COALESCE(jsonb_agg(t.text ORDER BY t.position), '[]'::jsonb) FROM thing t WHERE t.environment = env),
                'tr', (SELECT COALESCE(max(e.things_revision), 0) FROM environment e WHERE e.name = env), 'a', at)
        $$
        """

    static let thingsChangeFunction = """
        CREATE OR REPLACE FUNCTION tidings_things_change_v3(rev bigint, change_op text, thing_text text,
                                                            at bigint, actor text, why text, before_list text, env text)
        RETURNS change LANGUAGE sql AS $$
            INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before, environment)
            SELECT rev, 'things', change_op, thing_text,
                   COALESCE((SELECT json_agg(t.text ORDER BY t.position) FROM thing t WHERE t.environment = env)::text, '[]'),
                   32 + COALESCE(octet_length(convert_to(thing_text, 'UTF8')), 0)
                      + COALESCE((SELECT sum(octet_length(convert_to(t.text, 'UTF8')) + 3) FROM thing t WHERE t.environment = env), 0)
                      + octet_length(convert_to(actor, 'UTF8')) + COALESCE(octet_length(convert_to(why, 'UTF8')), 0)
                      + COALESCE(octet_length(convert_to(before_list, 'UTF8')), 0),
                   at, actor, why, before_list, env
            RETURNING *
        $$
        """
}
