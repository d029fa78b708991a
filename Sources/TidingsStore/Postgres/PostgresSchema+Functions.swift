/// Version 2's write functions: `tidings_apply_v1` (one write) and `tidings_commit_v1` (a
/// batch, group commit). Version 3 adds `_v2` successors (``PostgresHistorySchema``); these
/// stay so an instance of an older build still running keeps committing.
extension PostgresSchema {
    /// Applies one write at revision `rev` (If-Match checks, then its operations). Answers
    /// `{"c": [[revision, kind, op, subject, value], ...], "r": last revision, "t": things
    /// revision or null, "b": bytes added}`, or `{"s": sqlstate, "m": message, "d": detail}`
    /// when a condition fails before anything was modified (TD412 If-Match: m = key, d = the
    /// current revision; TD409 thing already there; TD404 thing not found). A condition that
    /// fails after an earlier operation of the same write modified something RAISEs instead:
    /// only such writes (several operations, one of them add or remove) run in a
    /// subtransaction, so most writes pay for none.
    static let applyFunction = """
        CREATE OR REPLACE FUNCTION tidings_apply_v1(w jsonb, rev bigint)
        RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
            o jsonb; i integer; expected jsonb; changes jsonb[] := '{}'; things_rev bigint; bytes_added bigint := 0;
            k text; v text; d text; x text; old_v text; cur bigint; pos bigint; n bigint;
            old_list jsonb; new_list jsonb; crow change%ROWTYPE;
        BEGIN
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
            -- Index loops and plain expressions: PL/pgSQL evaluates them without a query each.
            FOR i IN 0 .. jsonb_array_length(w->'o') - 1 LOOP
                o := w->'o'->i;
                CASE o->>'t'
                WHEN 'set' THEN
                    k := o->>'k'; v := o->>'v'; d := o->>'d';
                    old_v := NULL;
                    SELECT p.value INTO old_v FROM preference p WHERE p.key = k;
                    IF COALESCE(old_v, d) IS DISTINCT FROM COALESCE(v, d) THEN
                        rev := rev + 1;
                        n := 32 + octet_length(convert_to(k, 'UTF8')) + COALESCE(octet_length(convert_to(v, 'UTF8')), 0);
                        WITH stored AS (
                            INSERT INTO preference AS p (key, value, revision) VALUES (k, v, rev)
                                ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision
                        )
                        INSERT INTO change (revision, kind, op, subject, value, bytes)
                            VALUES (rev, 'preference', CASE WHEN v IS NULL THEN 'reset' ELSE 'set' END, k, v, n);
                        bytes_added := bytes_added + n;
                        changes := changes || jsonb_build_array(
                            rev, 'preference'::text, CASE WHEN v IS NULL THEN 'reset' ELSE 'set' END, k, v);
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
                    SELECT * INTO crow FROM tidings_things_change_v1(rev, 'add', x);
                    bytes_added := bytes_added + crow.bytes;
                    changes := changes || jsonb_build_array(crow.revision, crow.kind, crow.op, crow.subject, crow.value);
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
                    SELECT * INTO crow FROM tidings_things_change_v1(rev, 'remove', x);
                    bytes_added := bytes_added + crow.bytes;
                    changes := changes || jsonb_build_array(crow.revision, crow.kind, crow.op, crow.subject, crow.value);
                WHEN 'replace' THEN
                    new_list := o->'l';
                    SELECT COALESCE(jsonb_agg(t.text ORDER BY t.position), '[]') INTO old_list FROM thing t;
                    IF old_list IS DISTINCT FROM new_list THEN
                        DELETE FROM thing;
                        INSERT INTO thing (text, position)
                            SELECT e.t, e.i FROM jsonb_array_elements_text(new_list) WITH ORDINALITY AS e(t, i);
                        rev := rev + 1; things_rev := rev;
                        SELECT * INTO crow FROM tidings_things_change_v1(rev, 'replace', NULL);
                        bytes_added := bytes_added + crow.bytes;
                        changes := changes || jsonb_build_array(crow.revision, crow.kind, crow.op, crow.subject, crow.value);
                    END IF;
                WHEN 'posts' THEN
                    x := o->>'x';
                    old_v := NULL;
                    SELECT p.document INTO old_v FROM posts p WHERE p.id = 1;
                    IF old_v IS DISTINCT FROM x THEN
                        rev := rev + 1;
                        INSERT INTO posts AS p (id, document, revision) VALUES (1, x, rev)
                            ON CONFLICT (id) DO UPDATE SET document = excluded.document, revision = excluded.revision;
                        n := 32 + octet_length(convert_to(x, 'UTF8'));
                        INSERT INTO change (revision, kind, op, subject, value, bytes)
                            VALUES (rev, 'posts', 'set', NULL, x, n);
                        bytes_added := bytes_added + n;
                        changes := changes || jsonb_build_array(rev, 'posts'::text, 'set'::text, NULL::text, x);
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

    /// One batch of writes (group commit). Input: a JSON array of writes
    /// `{"e": {key: [revisions]}, "o": [operations]}`; output: a JSON array with, per write,
    /// what ``applyFunction`` answered for it (a write that RAISEd: `{"s", "m", "d"}`, its
    /// subtransaction rolled back alone). Takes the counter row's lock first, so every
    /// committer of every instance draws revisions in commit order; prunes the history and
    /// notifies ``channel`` in the same transaction.
    static let commitFunction = """
        CREATE OR REPLACE FUNCTION tidings_commit_v1(batch jsonb, max_count bigint, max_bytes bigint)
        RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
            rev bigint; first_rev bigint; things_rev bigint; hist_bytes bigint;
            w jsonb; i integer; res jsonb; results jsonb[] := '{}'; removed bigint; cutoff bigint; r record;
            err_state text; err_msg text; err_detail text;
        BEGIN
            -- The counter row's lock, held until COMMIT, orders every committer of every instance.
            SELECT m.revision, m.things_revision, m.history_bytes INTO rev, things_rev, hist_bytes
                FROM meta m WHERE m.id = 1 FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'tidings: the meta row is missing';
            END IF;
            first_rev := rev;
            FOR i IN 0 .. jsonb_array_length(batch) - 1 LOOP
                w := batch->i;
                IF jsonb_array_length(w->'o') > 1 AND (w->'o' @> '[{"t": "add"}]' OR w->'o' @> '[{"t": "remove"}]') THEN
                    BEGIN
                        res := tidings_apply_v1(w, rev);
                    EXCEPTION WHEN OTHERS THEN
                        GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_msg = MESSAGE_TEXT,
                            err_detail = PG_EXCEPTION_DETAIL;
                        res := jsonb_build_object('s', err_state, 'm', err_msg, 'd', err_detail);
                    END;
                ELSE
                    res := tidings_apply_v1(w, rev);
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
                -- Prune oldest first to at most max_count rows, then to at most max_bytes bytes.
                IF rev - max_count > 0 THEN
                    WITH gone AS (DELETE FROM change c WHERE c.revision <= rev - max_count RETURNING c.bytes)
                        SELECT COALESCE(sum(gone.bytes), 0) INTO removed FROM gone;
                    hist_bytes := hist_bytes - removed;
                END IF;
                IF hist_bytes > max_bytes THEN
                    cutoff := NULL;
                    FOR r IN SELECT c.revision, c.bytes FROM change c ORDER BY c.revision LOOP
                        EXIT WHEN hist_bytes <= max_bytes;
                        hist_bytes := hist_bytes - r.bytes;
                        cutoff := r.revision;
                    END LOOP;
                    IF cutoff IS NOT NULL THEN
                        DELETE FROM change c WHERE c.revision <= cutoff;
                    END IF;
                END IF;
                UPDATE meta SET revision = rev, things_revision = things_rev,
                    history_bytes = GREATEST(hist_bytes, 0) WHERE id = 1;
                PERFORM pg_notify('\(channel)', rev::text);
            END IF;
            RETURN to_jsonb(results);
        END
        $$
        """
}
