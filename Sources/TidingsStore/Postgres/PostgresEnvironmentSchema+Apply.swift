/// Version 5's `tidings_apply_v3`: one write into one environment.
extension PostgresEnvironmentSchema {
    /// As `tidings_apply_v2`, in the write's environment (`n`, default `default`), which must
    /// exist unless the write creates it (TD404E). More operations: `create` (`f`: copied
    /// from, `l`: the most environments; TD409E it exists, TD409M too many) and `delete`
    /// (TD409D for `default`; its rows go, its history rows become erased rows, its pending
    /// schedules are cancelled — since version 7, which creates the schedule table). Change tuples
    /// are `[revision, kind, op, subject, value, before, at, environment]`.
    static let applyFunction = """
        CREATE OR REPLACE FUNCTION tidings_apply_v3(w jsonb, rev bigint, at bigint)
        RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
            o jsonb; i integer; expected jsonb; changes jsonb[] := '{}'; bytes_added bigint := 0;
            k text; v text; d text; x text; old_v text; cur bigint; pos bigint; n bigint;
            old_list jsonb; new_list jsonb; crow change%ROWTYPE;
            actor text := COALESCE(w->>'a', ''); why text := w->>'y'; env text := COALESCE(w->>'n', 'default');
            meta_bytes bigint;
        BEGIN
            meta_bytes := octet_length(convert_to(actor, 'UTF8')) + COALESCE(octet_length(convert_to(why, 'UTF8')), 0);
            IF w ? 'g' AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(w->'g') AS ex(t) WHERE ex.t::bigint = rev) THEN
                RETURN jsonb_build_object('s', 'TD412', 'm', '', 'd', rev::text);
            END IF;
            IF NOT (w->'o' @> '[{"t": "create"}]') AND NOT EXISTS (SELECT 1 FROM environment e WHERE e.name = env) THEN
                RETURN jsonb_build_object('s', 'TD404E', 'm', env);
            END IF;
            IF w ? 'e' THEN
                FOR k, expected IN SELECT e.key, e.value FROM jsonb_each(w->'e') AS e LOOP
                    cur := NULL;
                    SELECT p.revision INTO cur FROM preference p WHERE p.environment = env AND p.key = k;
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
                    SELECT p.value INTO old_v FROM preference p WHERE p.environment = env AND p.key = k;
                    IF COALESCE(old_v, d) IS DISTINCT FROM COALESCE(v, d) THEN
                        rev := rev + 1;
                        n := 32 + octet_length(convert_to(k, 'UTF8')) + COALESCE(octet_length(convert_to(v, 'UTF8')), 0)
                            + meta_bytes + COALESCE(octet_length(convert_to(old_v, 'UTF8')), 0);
                        INSERT INTO preference AS p (environment, key, value, revision) VALUES (env, k, v, rev)
                            ON CONFLICT (environment, key) DO UPDATE SET value = excluded.value, revision = excluded.revision;
                        INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before, environment)
                            VALUES (rev, 'preference', CASE WHEN v IS NULL THEN 'reset' ELSE 'set' END, k, v, n,
                                    at, actor, why, old_v, env);
                        UPDATE environment SET revision = rev WHERE name = env;
                        bytes_added := bytes_added + n;
                        changes := changes || jsonb_build_array(
                            rev, 'preference'::text, CASE WHEN v IS NULL THEN 'reset' ELSE 'set' END, k, v, old_v, at, env);
                    END IF;
                WHEN 'add' THEN
                    x := o->>'x';
                    IF EXISTS (SELECT 1 FROM thing t WHERE t.environment = env AND t.text = x) THEN
                        IF cardinality(changes) = 0 THEN
                            RETURN jsonb_build_object('s', 'TD409', 'm', x);
                        END IF;
                        RAISE EXCEPTION USING ERRCODE = 'TD409', MESSAGE = x;
                    END IF;
                    SELECT COALESCE(max(t.position), 0) + 1 INTO pos FROM thing t WHERE t.environment = env;
                    INSERT INTO thing (environment, text, position) VALUES (env, x, pos);
                    rev := rev + 1;
                    UPDATE environment SET things_revision = rev, revision = rev WHERE name = env;
                    SELECT * INTO crow FROM tidings_things_change_v3(rev, 'add', x, at, actor, why, NULL, env);
                    bytes_added := bytes_added + crow.bytes;
                    changes := changes || jsonb_build_array(crow.revision, crow.kind, crow.op, crow.subject, crow.value, NULL::text, at, env);
                WHEN 'remove' THEN
                    x := o->>'x';
                    IF NOT EXISTS (SELECT 1 FROM thing t WHERE t.environment = env AND t.text = x) THEN
                        IF cardinality(changes) = 0 THEN
                            RETURN jsonb_build_object('s', 'TD404', 'm', x);
                        END IF;
                        RAISE EXCEPTION USING ERRCODE = 'TD404', MESSAGE = x;
                    END IF;
                    DELETE FROM thing t WHERE t.environment = env AND t.text = x;
                    rev := rev + 1;
                    UPDATE environment SET things_revision = rev, revision = rev WHERE name = env;
                    SELECT * INTO crow FROM tidings_things_change_v3(rev, 'remove', x, at, actor, why, NULL, env);
                    bytes_added := bytes_added + crow.bytes;
                    changes := changes || jsonb_build_array(crow.revision, crow.kind, crow.op, crow.subject, crow.value, NULL::text, at, env);
                WHEN 'replace' THEN
                    new_list := o->'l';
                    SELECT COALESCE(jsonb_agg(t.text ORDER BY t.position), '[]') INTO old_list FROM thing t WHERE t.environment = env;
                    IF old_list IS DISTINCT FROM new_list THEN
                        DELETE FROM thing t WHERE t.environment = env;
                        INSERT INTO thing (environment, text, position)
                            SELECT env, e.t, e.i FROM jsonb_array_elements_text(new_list) WITH ORDINALITY AS e(t, i);
                        rev := rev + 1;
                        UPDATE environment SET things_revision = rev, revision = rev WHERE name = env;
                        SELECT * INTO crow FROM tidings_things_change_v3(rev, 'replace', NULL, at, actor, why, old_list::text, env);
                        bytes_added := bytes_added + crow.bytes;
                        changes := changes || jsonb_build_array(crow.revision, crow.kind, crow.op, crow.subject, crow.value, crow.before, at, env);
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
                        INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before, environment)
                            VALUES (rev, 'posts', 'set', NULL, x, n, at, actor, why, NULL, 'default');
                        bytes_added := bytes_added + n;
                        changes := changes || jsonb_build_array(rev, 'posts'::text, 'set'::text, NULL::text, x, NULL::text, at, 'default'::text);
                    END IF;
                WHEN 'create' THEN
                    IF EXISTS (SELECT 1 FROM environment e WHERE e.name = env) THEN
                        IF cardinality(changes) = 0 THEN
                            RETURN jsonb_build_object('s', 'TD409E', 'm', env);
                        END IF;
                        RAISE EXCEPTION USING ERRCODE = 'TD409', MESSAGE = env;
                    END IF;
                    IF (SELECT count(*) FROM environment) >= (o->>'l')::bigint THEN
                        RETURN jsonb_build_object('s', 'TD409M', 'm', env, 'd', o->>'l');
                    END IF;
                    x := o->>'f';
                    INSERT INTO environment (name, created_at, copied_from) VALUES (env, at, x);
                    rev := rev + 1;
                    n := 32 + meta_bytes + octet_length(convert_to(env, 'UTF8')) + COALESCE(octet_length(convert_to(x, 'UTF8')), 0);
                    INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before, environment)
                        VALUES (rev, 'environment', 'created', x, NULL, n, at, actor, why, NULL, env);
                    UPDATE environment SET revision = rev WHERE name = env;
                    bytes_added := bytes_added + n;
                    changes := changes || jsonb_build_array(rev, 'environment'::text, 'created'::text, x, NULL::text, NULL::text, at, env);
                WHEN 'delete' THEN
                    IF env = 'default' THEN
                        RETURN jsonb_build_object('s', 'TD409D', 'm', env);
                    END IF;
                    SELECT COALESCE(sum(c.bytes - 32), 0) INTO n FROM change c WHERE c.environment = env;
                    bytes_added := bytes_added - n;
                    UPDATE change SET kind = 'environment', op = 'erased', subject = NULL, value = NULL, bytes = 32,
                                      actor = '', reason = NULL, before = NULL, environment = ''
                     WHERE environment = env;
                    DELETE FROM preference p WHERE p.environment = env;
                    DELETE FROM thing t WHERE t.environment = env;
                    SELECT COALESCE(sum(octet_length(k.state::text)), 0) INTO n FROM checkpoint k WHERE k.environment = env;
                    bytes_added := bytes_added - n;
                    DELETE FROM checkpoint k WHERE k.environment = env;
                    DELETE FROM history_base b WHERE b.environment = env;
                    DELETE FROM environment e WHERE e.name = env;
                    UPDATE schedule s SET state = 'cancelled', finished_at = tidings_apply_v3.at, holder = NULL, claimed_until = NULL
                     WHERE s.environment = env AND s.state = 'pending';
                    rev := rev + 1;
                    n := 32 + meta_bytes + octet_length(convert_to(env, 'UTF8'));
                    INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before, environment)
                        VALUES (rev, 'environment', 'deleted', NULL, NULL, n, at, actor, why, NULL, env);
                    bytes_added := bytes_added + n;
                    changes := changes || jsonb_build_array(rev, 'environment'::text, 'deleted'::text, NULL::text, NULL::text, NULL::text, at, env);
                ELSE
                    IF cardinality(changes) = 0 THEN
                        RETURN jsonb_build_object('s', 'TD400', 'm', 'unknown operation ' || COALESCE(o->>'t', 'null'));
                    END IF;
                    RAISE EXCEPTION USING ERRCODE = 'TD400', MESSAGE = 'unknown operation ' || COALESCE(o->>'t', 'null');
                END CASE;
            END LOOP;
            RETURN jsonb_build_object('c', to_jsonb(changes), 'r', rev, 'b', bytes_added);
        END
        $$
        """
}
