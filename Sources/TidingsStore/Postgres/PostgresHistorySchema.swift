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
          FROM meta m WHERE m.id = 1
        ON CONFLICT (id) DO NOTHING
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

    /// As `tidings_apply_v1`, recording `at`, the write's actor (`a`) and reason (`y`) and what
    /// each change replaced; `g`: the global revisions the write accepts (If-Match). Change
    /// tuples are `[revision, kind, op, subject, value, before, at]`.
    static let applyFunction = """
        CREATE OR REPLACE FUNCTION tidings_apply_v2(w jsonb, rev bigint, at bigint)
        RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
            o jsonb; i integer; expected jsonb; changes jsonb[] := '{}'; things_rev bigint; bytes_added bigint := 0;
            k text; v text; d text; x text; old_v text; cur bigint; pos bigint; n bigint;
            old_list jsonb; new_list jsonb; crow change%ROWTYPE;
            actor text := COALESCE(w->>'a', ''); why text := w->>'y';
            meta_bytes bigint;
        BEGIN
            meta_bytes := octet_length(convert_to(actor, 'UTF8')) + COALESCE(octet_length(convert_to(why, 'UTF8')), 0);
            IF w ? 'g' AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(w->'g') AS ex(t) WHERE ex.t::bigint = rev) THEN
                RETURN jsonb_build_object('s', 'TD412', 'm', '', 'd', rev::text);
            END IF;
            IF w ? 'e' THEN
                FOR k, expected IN SELECT e.key, e.value FROM jsonb_each(w->'e') AS e LOOP
                    cur := NULL;
                    SELECT p.revision INTO cur FROM preference p WHERE p.key = k;
                    cur := COALESCE(cur, 0);
                    IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(expected) AS ex(t) WHERE ex.t::bigint = cur) THEN
                        RETURN jsonb_build_object('s', 'TD412', 'm', k, 'd', cur::text);
                    END IF;
                END LOOP;
            END IF;
            FOR i IN 0 .. jsonb_array_length(w->'o') - 1 LOOP
                o := w->'o'->i;
                CASE o->>'t'
                WHEN 'set' THEN
                    k := o->>'k'; v := o->>'v'; d := o->>'d';
                    old_v := NULL;
                    SELECT p.value INTO old_v FROM preference p WHERE p.key = k;
                    IF COALESCE(old_v, d) IS DISTINCT FROM COALESCE(v, d) THEN
                        rev := rev + 1;
                        n := 32 + octet_length(convert_to(k, 'UTF8')) + COALESCE(octet_length(convert_to(v, 'UTF8')), 0)
                            + meta_bytes + COALESCE(octet_length(convert_to(old_v, 'UTF8')), 0);
                        WITH stored AS (
                            INSERT INTO preference AS p (key, value, revision) VALUES (k, v, rev)
                                ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision
                        )
                        INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before)
                            VALUES (rev, 'preference', CASE WHEN v IS NULL THEN 'reset' ELSE 'set' END, k, v, n,
                                    at, actor, why, old_v);
                        bytes_added := bytes_added + n;
                        changes := changes || jsonb_build_array(
                            rev, 'preference'::text, CASE WHEN v IS NULL THEN 'reset' ELSE 'set' END, k, v, old_v, at);
                    END IF;
                WHEN 'add' THEN
                    x := o->>'x';
                    IF EXISTS (SELECT 1 FROM thing t WHERE t.text = x) THEN
                        IF cardinality(changes) = 0 THEN
                            RETURN jsonb_build_object('s', 'TD409', 'm', x);
                        END IF;
                        RAISE EXCEPTION USING ERRCODE = 'TD409', MESSAGE = x;
                    END IF;
                    SELECT COALESCE(max(t.position), 0) + 1 INTO pos FROM thing t;
                    INSERT INTO thing (text, position) VALUES (x, pos);
                    rev := rev + 1; things_rev := rev;
                    SELECT * INTO crow FROM tidings_things_change_v2(rev, 'add', x, at, actor, why, NULL);
                    bytes_added := bytes_added + crow.bytes;
                    changes := changes || jsonb_build_array(crow.revision, crow.kind, crow.op, crow.subject, crow.value, NULL::text, at);
                WHEN 'remove' THEN
                    x := o->>'x';
                    IF NOT EXISTS (SELECT 1 FROM thing t WHERE t.text = x) THEN
                        IF cardinality(changes) = 0 THEN
                            RETURN jsonb_build_object('s', 'TD404', 'm', x);
                        END IF;
                        RAISE EXCEPTION USING ERRCODE = 'TD404', MESSAGE = x;
                    END IF;
                    DELETE FROM thing t WHERE t.text = x;
                    rev := rev + 1; things_rev := rev;
                    SELECT * INTO crow FROM tidings_things_change_v2(rev, 'remove', x, at, actor, why, NULL);
                    bytes_added := bytes_added + crow.bytes;
                    changes := changes || jsonb_build_array(crow.revision, crow.kind, crow.op, crow.subject, crow.value, NULL::text, at);
                WHEN 'replace' THEN
                    new_list := o->'l';
                    SELECT COALESCE(jsonb_agg(t.text ORDER BY t.position), '[]') INTO old_list FROM thing t;
                    IF old_list IS DISTINCT FROM new_list THEN
                        DELETE FROM thing;
                        INSERT INTO thing (text, position)
                            SELECT e.t, e.i FROM jsonb_array_elements_text(new_list) WITH ORDINALITY AS e(t, i);
                        rev := rev + 1; things_rev := rev;
                        SELECT * INTO crow FROM tidings_things_change_v2(rev, 'replace', NULL, at, actor, why, old_list::text);
                        bytes_added := bytes_added + crow.bytes;
                        changes := changes || jsonb_build_array(crow.revision, crow.kind, crow.op, crow.subject, crow.value, crow.before, at);
                    END IF;
                WHEN 'posts' THEN
                    x := o->>'x';
                    old_v := NULL;
                    SELECT p.document INTO old_v FROM posts p WHERE p.id = 1;
                    IF old_v IS DISTINCT FROM x THEN
                        rev := rev + 1;
                        INSERT INTO posts AS p (id, document, revision) VALUES (1, x, rev)
                            ON CONFLICT (id) DO UPDATE SET document = excluded.document, revision = excluded.revision;
                        n := 32 + octet_length(convert_to(x, 'UTF8')) + meta_bytes;
                        INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before)
                            VALUES (rev, 'posts', 'set', NULL, x, n, at, actor, why, NULL);
                        bytes_added := bytes_added + n;
                        changes := changes || jsonb_build_array(rev, 'posts'::text, 'set'::text, NULL::text, x, NULL::text, at);
                    END IF;
                ELSE
                    IF cardinality(changes) = 0 THEN
                        RETURN jsonb_build_object('s', 'TD400', 'm', 'unknown operation ' || COALESCE(o->>'t', 'null'));
                    END IF;
                    RAISE EXCEPTION USING ERRCODE = 'TD400', MESSAGE = 'unknown operation ' || COALESCE(o->>'t', 'null');
                END CASE;
            END LOOP;
            RETURN jsonb_build_object('c', to_jsonb(changes), 'r', rev, 't', things_rev, 'b', bytes_added);
        END
        $$
        """

    /// One batch (see `tidings_commit_v1`), stamped `now` (microseconds; never earlier than
    /// the last commit's), writing a checkpoint when the batch passes a multiple of
    /// `checkpoint_every`, and pruning oldest first while an upper bound is exceeded (rows,
    /// bytes, age; `max_age` < 0: none) outside the kept window (`keep_count` rows within
    /// `keep_bytes`), folding what it drops into `history_base`.
    static let commitFunction = """
        CREATE OR REPLACE FUNCTION tidings_commit_v2(batch jsonb, now bigint, max_count bigint, max_bytes bigint,
                                                     max_age bigint, keep_count bigint, keep_bytes bigint, checkpoint_every bigint)
        RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
            rev bigint; first_rev bigint; things_rev bigint; hist_bytes bigint; last_at bigint; at bigint;
            w jsonb; i integer; res jsonb; results jsonb[] := '{}'; cutoff bigint; r record;
            err_state text; err_msg text; err_detail text;
            oldest bigint; oldest_at bigint; cnt bigint; age_cut bigint;
            base_rev bigint; base jsonb; folded jsonb; lr bigint; lv text; la bigint;
        BEGIN
            SELECT m.revision, m.things_revision, m.history_bytes, m.last_at INTO rev, things_rev, hist_bytes, last_at
                FROM meta m WHERE m.id = 1 FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'tidings: the meta row is missing';
            END IF;
            first_rev := rev;
            at := GREATEST(now, last_at);
            FOR i IN 0 .. jsonb_array_length(batch) - 1 LOOP
                w := batch->i;
                IF jsonb_array_length(w->'o') > 1 AND (w->'o' @> '[{"t": "add"}]' OR w->'o' @> '[{"t": "remove"}]') THEN
                    BEGIN
                        res := tidings_apply_v2(w, rev, at);
                    EXCEPTION WHEN OTHERS THEN
                        GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_msg = MESSAGE_TEXT,
                            err_detail = PG_EXCEPTION_DETAIL;
                        res := jsonb_build_object('s', err_state, 'm', err_msg, 'd', err_detail);
                    END;
                ELSE
                    res := tidings_apply_v2(w, rev, at);
                END IF;
                IF res ? 'c' THEN
                    rev := (res->>'r')::bigint;
                    hist_bytes := hist_bytes + (res->>'b')::bigint;
                    IF jsonb_typeof(res->'t') = 'number' THEN
                        things_rev := (res->>'t')::bigint;
                    END IF;
                END IF;
                results := results || res;
            END LOOP;
            IF rev > first_rev THEN
                IF rev / checkpoint_every > first_rev / checkpoint_every THEN
                    INSERT INTO checkpoint (revision, state) VALUES (rev, tidings_state_v1(at, things_rev))
                        ON CONFLICT (revision) DO UPDATE SET state = excluded.state;
                END IF;
                SELECT min(c.revision) INTO oldest FROM change c;
                IF oldest IS NOT NULL THEN
                    cnt := rev - oldest + 1;
                    age_cut := CASE WHEN max_age >= 0 THEN now - max_age ELSE NULL END;
                    SELECT c.at INTO oldest_at FROM change c WHERE c.revision = oldest;
                    IF (cnt > max_count OR hist_bytes > max_bytes OR (age_cut IS NOT NULL AND oldest_at < age_cut))
                       AND NOT (cnt <= keep_count AND hist_bytes <= keep_bytes) THEN
                        cutoff := NULL;
                        FOR r IN SELECT c.revision, c.bytes, c.at FROM change c ORDER BY c.revision LOOP
                            EXIT WHEN NOT (cnt > max_count OR hist_bytes > max_bytes OR (age_cut IS NOT NULL AND r.at < age_cut));
                            EXIT WHEN cnt <= keep_count AND hist_bytes <= keep_bytes;
                            hist_bytes := hist_bytes - r.bytes;
                            cnt := cnt - 1;
                            cutoff := r.revision;
                            la := r.at;
                        END LOOP;
                        IF cutoff IS NOT NULL THEN
                            SELECT b.revision, b.state INTO base_rev, base FROM history_base b WHERE b.id = 1 FOR UPDATE;
                            base_rev := COALESCE(base_rev, 0);
                            base := COALESCE(base, '{}'::jsonb);
                            SELECT jsonb_object_agg(q.subject, jsonb_build_object('v', q.value, 'r', q.revision)) INTO folded
                              FROM (SELECT DISTINCT ON (c.subject) c.subject, c.value, c.revision FROM change c
                                     WHERE c.kind = 'preference' AND c.revision > base_rev AND c.revision <= cutoff
                                     ORDER BY c.subject, c.revision DESC) q;
                            IF folded IS NOT NULL THEN
                                base := jsonb_set(base, '{p}', COALESCE(base->'p', '{}'::jsonb) || folded);
                            END IF;
                            SELECT c.revision, c.value INTO lr, lv FROM change c
                             WHERE c.kind = 'things' AND c.revision > base_rev AND c.revision <= cutoff
                             ORDER BY c.revision DESC LIMIT 1;
                            IF FOUND THEN
                                base := base || jsonb_build_object('t', lv::jsonb, 'tr', lr);
                            END IF;
                            IF cutoff > base_rev THEN
                                base := base || jsonb_build_object('a', la);
                            END IF;
                            INSERT INTO history_base (id, revision, state) VALUES (1, GREATEST(base_rev, cutoff), base)
                                ON CONFLICT (id) DO UPDATE SET revision = excluded.revision, state = excluded.state;
                            DELETE FROM change c WHERE c.revision <= cutoff;
                            DELETE FROM checkpoint k WHERE k.revision <= cutoff;
                        END IF;
                    END IF;
                END IF;
                UPDATE meta SET revision = rev, things_revision = things_rev,
                    history_bytes = GREATEST(hist_bytes, 0), last_at = at WHERE id = 1;
                PERFORM pg_notify('\(PostgresSchema.channel)', rev::text);
            END IF;
            RETURN to_jsonb(results);
        END
        $$
        """

    /// The state as of revision `want` (or, when `at_time` is not null, the last revision
    /// committed at or before it), in one snapshot (STABLE): `{"r": revision, "state": {...}}`,
    /// or `{"s": "future"|"gone", "d": revision}`.
    static let asOfFunction = """
        CREATE OR REPLACE FUNCTION tidings_as_of_v1(want bigint, at_time bigint)
        RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
        DECLARE
            cur bigint; floor_rev bigint; base jsonb; target bigint; start_rev bigint; st jsonb;
            folded jsonb; lr bigint; lv text;
        BEGIN
            SELECT m.revision INTO cur FROM meta m WHERE m.id = 1;
            SELECT b.revision, b.state INTO floor_rev, base FROM history_base b WHERE b.id = 1;
            floor_rev := COALESCE(floor_rev, 0);
            base := COALESCE(base, '{}'::jsonb);
            IF at_time IS NULL THEN
                IF want > cur THEN
                    RETURN jsonb_build_object('s', 'future', 'd', cur);
                END IF;
                target := want;
            ELSE
                SELECT max(c.revision) INTO target FROM change c WHERE c.at <= at_time;
                IF target IS NULL THEN
                    IF floor_rev = 0 OR COALESCE((base->>'a')::bigint, 0) <= at_time THEN
                        target := floor_rev;
                    ELSE
                        RETURN jsonb_build_object('s', 'gone', 'd', floor_rev);
                    END IF;
                END IF;
            END IF;
            IF target < floor_rev THEN
                RETURN jsonb_build_object('s', 'gone', 'd', floor_rev);
            END IF;
            SELECT k.revision, k.state INTO start_rev, st FROM checkpoint k
             WHERE k.revision <= target AND k.revision >= floor_rev ORDER BY k.revision DESC LIMIT 1;
            IF NOT FOUND THEN
                start_rev := floor_rev;
                st := base;
            END IF;
            SELECT jsonb_object_agg(q.subject, jsonb_build_object('v', q.value, 'r', q.revision)) INTO folded
              FROM (SELECT DISTINCT ON (c.subject) c.subject, c.value, c.revision FROM change c
                     WHERE c.kind = 'preference' AND c.revision > start_rev AND c.revision <= target
                     ORDER BY c.subject, c.revision DESC) q;
            IF folded IS NOT NULL THEN
                st := jsonb_set(st, '{p}', COALESCE(st->'p', '{}'::jsonb) || folded);
            END IF;
            SELECT c.revision, c.value INTO lr, lv FROM change c
             WHERE c.kind = 'things' AND c.revision > start_rev AND c.revision <= target
             ORDER BY c.revision DESC LIMIT 1;
            IF FOUND THEN
                st := st || jsonb_build_object('t', lv::jsonb, 'tr', lr);
            END IF;
            RETURN jsonb_build_object('r', target, 'state', st);
        END
        $$
        """
}
