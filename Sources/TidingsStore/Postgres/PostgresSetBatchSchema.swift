/// Schema version 10: `tidings_set_batch_v1`, the group commit's call for a batch in which every
/// write sets or resets one preference with no `If-Match` (nearly every batch under load), and
/// `tidings_upkeep_v1`, what every commit does after its rows (``PostgresEnvironmentSchema/upkeepBlock``).
///
/// The batch comes as arrays (one element per write) and the answer as one row per write, so
/// neither side builds or parses JSON: measured on this machine, parsing the batch's `jsonb`,
/// taking it apart and building the answer's `jsonb` cost about as much database CPU as the
/// rows, and encoding and decoding that JSON was a sixth of the instance's CPU per write.
/// `tidings_commit_v3` stays for every other batch (and for an instance of the version-9 build
/// still running: both take the counter row's lock first, so revisions stay in commit order).
enum PostgresSetBatchSchema {
    static let statements: [String] = [upkeepFunction, setBatchFunction]

    static let upkeepFunction = """
        CREATE OR REPLACE FUNCTION tidings_upkeep_v1(first_rev bigint, rev bigint, hist_bytes bigint, at bigint, now bigint,
                                                     max_count bigint, max_bytes bigint, max_age bigint, keep_count bigint,
                                                     keep_bytes bigint, checkpoint_every bigint)
        RETURNS void LANGUAGE plpgsql AS $$
        DECLARE
            cutoff bigint; r record; oldest bigint; oldest_at bigint; cnt bigint; age_cut bigint;
            base_rev bigint; base jsonb; folded jsonb; lr bigint; lv text; la bigint; env_name text;
            cp jsonb; cp_bytes bigint; since bigint; freed bigint;
        BEGIN
            \(PostgresEnvironmentSchema.upkeepBlock)
        END
        $$
        """

    /// Write `i` of the batch: set `keys[i]` to `vals_in[i]` (reset when `resets[i]`) in
    /// environment `envs_in[i]`, with the declared default `defaults[i]`, by `actors[i]` for
    /// `reasons[i]` (none unless `has_reason[i]`).
    /// Applied in order from the counter row's revision exactly as `tidings_sets_v1` applies a
    /// batch of sets (the environment must exist; a write that leaves the value as it is —
    /// defaults counted — takes no revision; bytes as ``Change/byteCount``), each preference's
    /// value read once and kept in arrays, the rows written by three statements at the end.
    /// Answers one row per write, in order: `c` (changed: its revision and what it replaced), `n`
    /// (nothing to change: the revision the store is at) or `E` (no such environment), each
    /// with the commit time.
    static let setBatchFunction = """
        CREATE OR REPLACE FUNCTION tidings_set_batch_v1(keys text[], vals_in text[], resets boolean[], defaults text[],
                                                        envs_in text[], actors text[], reasons text[], has_reason boolean[],
                                                        now bigint, max_count bigint, max_bytes bigint, max_age bigint,
                                                        keep_count bigint, keep_bytes bigint, checkpoint_every bigint)
        RETURNS TABLE (w_state text, w_rev bigint, w_before text, w_at bigint) LANGUAGE plpgsql AS $$
        DECLARE
            rev bigint; first_rev bigint; hist_bytes bigint; last_at bigint; t bigint; added bigint;
            cnt integer := COALESCE(cardinality(keys), 0); i integer; j integer; e integer; old_v text;
            w_slot integer[]; w_env integer[];
            s_env text[]; s_key text[]; vals text[]; revs bigint[]; dirty boolean[];
            envs text[]; env_ok boolean[]; env_rev bigint[];
            o_state text[]; o_rev bigint[]; o_before text[];
        BEGIN
            IF EXISTS (SELECT 1 FROM unnest(ARRAY[cardinality(vals_in), cardinality(resets), cardinality(defaults),
                                                  cardinality(envs_in), cardinality(actors), cardinality(reasons),
                                                  cardinality(has_reason)]) AS c(n)
                        WHERE c.n IS DISTINCT FROM cardinality(keys)) THEN
                RAISE EXCEPTION 'tidings: the batch''s arrays differ in length';
            END IF;
            SELECT m.revision, m.history_bytes, m.last_at INTO rev, hist_bytes, last_at
                FROM meta m WHERE m.id = 1 FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'tidings: the meta row is missing';
            END IF;
            first_rev := rev;
            t := GREATEST(now, last_at);
            -- Each write's value and reason (NULL where `resets` or not `has_reason` says so: the
            -- arrays come without NULLs), slot (one per environment and key) and environment
            -- number; then each slot's stored value and revision, and whether each environment
            -- exists, read once.
            SELECT array_agg(q.v ORDER BY q.ord), array_agg(q.y ORDER BY q.ord), array_agg(q.slot ORDER BY q.ord),
                   array_agg(q.env ORDER BY q.ord)
              INTO vals_in, reasons, w_slot, w_env
              FROM (SELECT u.ord, CASE WHEN u.rs THEN NULL ELSE u.v END AS v, CASE WHEN u.hy THEN u.y END AS y,
                           dense_rank() OVER (ORDER BY u.n, u.k)::integer AS slot, dense_rank() OVER (ORDER BY u.n)::integer AS env
                      FROM unnest(envs_in, keys, vals_in, resets, reasons, has_reason) WITH ORDINALITY AS u(n, k, v, rs, y, hy, ord)) q;
            SELECT array_agg(s.n ORDER BY s.slot), array_agg(s.k ORDER BY s.slot), array_agg(p.value ORDER BY s.slot),
                   array_agg(COALESCE(p.revision, 0) ORDER BY s.slot)
              INTO s_env, s_key, vals, revs
              FROM (SELECT DISTINCT u.slot, u.n, u.k FROM unnest(w_slot, envs_in, keys) AS u(slot, n, k)) s
              LEFT JOIN preference p ON p.environment = s.n AND p.key = s.k;
            SELECT array_agg(d.n ORDER BY d.env), array_agg(EXISTS (SELECT 1 FROM environment x WHERE x.name = d.n) ORDER BY d.env)
              INTO envs, env_ok
              FROM (SELECT DISTINCT u.env, u.n FROM unnest(w_env, envs_in) AS u(env, n)) d;
            dirty := array_fill(false, ARRAY[COALESCE(cardinality(s_key), 0)]);
            env_rev := array_fill(NULL::bigint, ARRAY[COALESCE(cardinality(envs), 0)]);
            o_state := array_fill(NULL::text, ARRAY[cnt]);
            o_rev := array_fill(NULL::bigint, ARRAY[cnt]);
            o_before := array_fill(NULL::text, ARRAY[cnt]);
            FOR i IN 1 .. cnt LOOP
                e := w_env[i];
                IF NOT env_ok[e] THEN
                    o_state[i] := 'E';
                    CONTINUE;
                END IF;
                j := w_slot[i];
                old_v := vals[j];
                IF COALESCE(old_v, defaults[i]) IS DISTINCT FROM COALESCE(vals_in[i], defaults[i]) THEN
                    rev := rev + 1;
                    vals[j] := vals_in[i]; revs[j] := rev; dirty[j] := true; env_rev[e] := rev;
                    o_state[i] := 'c'; o_before[i] := old_v;
                ELSE
                    o_state[i] := 'n';
                END IF;
                o_rev[i] := rev;
            END LOOP;
            IF rev > first_rev THEN
                -- The rows, in three statements: change rows in revision order, then the last value
                -- of each preference changed, then each environment's revision.
                WITH inserted AS (
                    INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before, environment)
                    SELECT x.r, 'preference', CASE WHEN x.v IS NULL THEN 'reset' ELSE 'set' END, x.k, x.v,
                           32 + octet_length(convert_to(x.k, 'UTF8')) + COALESCE(octet_length(convert_to(x.v, 'UTF8')), 0)
                              + octet_length(convert_to(COALESCE(x.a, ''), 'UTF8')) + COALESCE(octet_length(convert_to(x.y, 'UTF8')), 0)
                              + COALESCE(octet_length(convert_to(x.b, 'UTF8')), 0),
                           t, COALESCE(x.a, ''), x.y, x.b, x.n
                      FROM unnest(o_state, o_rev, keys, vals_in, envs_in, actors, reasons, o_before) AS x(st, r, k, v, n, a, y, b)
                     WHERE x.st = 'c' ORDER BY x.r
                    RETURNING bytes
                )
                SELECT sum(inserted.bytes) INTO added FROM inserted;
                INSERT INTO preference AS p (environment, key, value, revision)
                    SELECT u.n, u.k, u.v, u.r FROM unnest(s_env, s_key, vals, revs, dirty) AS u(n, k, v, r, dirty) WHERE u.dirty
                    ON CONFLICT (environment, key) DO UPDATE SET value = excluded.value, revision = excluded.revision;
                UPDATE environment x SET revision = u.r FROM unnest(envs, env_rev) AS u(name, r) WHERE u.r IS NOT NULL AND x.name = u.name;
                PERFORM tidings_upkeep_v1(first_rev, rev, hist_bytes + added, t, now, max_count, max_bytes, max_age,
                                          keep_count, keep_bytes, checkpoint_every);
            END IF;
            RETURN QUERY SELECT x.st, x.r, x.b, t FROM unnest(o_state, o_rev, o_before) AS x(st, r, b);
        END
        $$
        """
}
