/// Schema version 9: `tidings_sets_v1`, the group commit's path for a batch in which every write
/// sets or resets one preference (what nearly every batch under load is).
extension PostgresEnvironmentSchema {
    /// The writes of `batch` — each exactly one `set` operation — applied from revision `rev`
    /// as `tidings_apply_v3` applies them one by one (the same checks in the same order: global
    /// If-Match, the environment, If-Match per key; the same no-op rule, revisions, bytes and
    /// change tuples), but with the batch's current values held in arrays rather than re-read,
    /// and its rows written by three statements at the end (the change rows, the preferences it
    /// changed, the environments' revisions) instead of three per write: about a third of the
    /// database's CPU per write. Answers `{"w": [per-write answer as tidings_apply_v3's], "r":
    /// last revision, "b": bytes added}`. No write of such a batch can fail after it modified
    /// something, so none needs a subtransaction.
    static let setsFunction = """
        CREATE OR REPLACE FUNCTION tidings_sets_v1(batch jsonb, rev bigint, at bigint)
        RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
            w jsonb; o jsonb; i integer; j integer; expected jsonb; results jsonb[] := '{}'; bytes_total bigint := 0;
            k text; v text; d text; old_v text; cur bigint; n bigint; slot text;
            actor text; why text; env text; meta_bytes bigint;
            envs text[] := '{}'; env_ok boolean[] := '{}'; env_rev bigint[] := '{}';
            keys text[] := '{}'; key_envs text[] := '{}'; key_names text[] := '{}'; vals text[] := '{}'; revs bigint[] := '{}'; dirty boolean[] := '{}';
            c_rev bigint[] := '{}'; c_op text[] := '{}'; c_subject text[] := '{}'; c_value text[] := '{}'; c_bytes bigint[] := '{}';
            c_actor text[] := '{}'; c_reason text[] := '{}'; c_before text[] := '{}'; c_env text[] := '{}';
            failed jsonb; ekey text;
        BEGIN
            -- envs: each environment the batch names, whether it exists, the last revision written
            -- in it; keys (length:environment:key): each preference it reads, with its current
            -- value and revision (read once, then kept here), dirty once the batch changed it.
            FOR i IN 0 .. jsonb_array_length(batch) - 1 LOOP
                w := batch->i;
                actor := COALESCE(w->>'a', ''); why := w->>'y'; env := COALESCE(w->>'n', 'default');
                failed := NULL;
                IF w ? 'g' AND NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(w->'g') AS ex(t) WHERE ex.t::bigint = rev) THEN
                    failed := jsonb_build_object('s', 'TD412', 'm', '', 'd', rev::text);
                END IF;
                IF failed IS NULL THEN
                    j := array_position(envs, env);
                    IF j IS NULL THEN
                        envs := envs || env;
                        env_ok := env_ok || EXISTS (SELECT 1 FROM environment e WHERE e.name = env);
                        env_rev := env_rev || NULL::bigint;
                        j := cardinality(envs);
                    END IF;
                    IF NOT env_ok[j] THEN
                        failed := jsonb_build_object('s', 'TD404E', 'm', env);
                    END IF;
                END IF;
                IF failed IS NULL AND w ? 'e' THEN
                    FOR ekey, expected IN SELECT e.key, e.value FROM jsonb_each(w->'e') AS e LOOP
                        slot := length(env) || ':' || env || ':' || ekey;
                        j := array_position(keys, slot);
                        IF j IS NULL THEN
                            old_v := NULL; cur := NULL;
                            SELECT p.value, p.revision INTO old_v, cur FROM preference p WHERE p.environment = env AND p.key = ekey;
                            keys := keys || slot; key_envs := key_envs || env; key_names := key_names || ekey; vals := vals || old_v; revs := revs || COALESCE(cur, 0); dirty := dirty || false;
                            j := cardinality(keys);
                        END IF;
                        cur := revs[j];
                        IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements_text(expected) AS ex(t) WHERE ex.t::bigint = cur) THEN
                            failed := jsonb_build_object('s', 'TD412', 'm', ekey, 'd', cur::text);
                            EXIT;
                        END IF;
                    END LOOP;
                END IF;
                IF failed IS NOT NULL THEN
                    results := results || failed;
                    CONTINUE;
                END IF;
                o := w->'o'->0;
                k := o->>'k'; v := o->>'v'; d := o->>'d';
                slot := length(env) || ':' || env || ':' || k;
                j := array_position(keys, slot);
                IF j IS NULL THEN
                    old_v := NULL; cur := NULL;
                    SELECT p.value, p.revision INTO old_v, cur FROM preference p WHERE p.environment = env AND p.key = k;
                    keys := keys || slot; key_envs := key_envs || env; key_names := key_names || k; vals := vals || old_v; revs := revs || COALESCE(cur, 0); dirty := dirty || false;
                    j := cardinality(keys);
                END IF;
                old_v := vals[j];
                IF COALESCE(old_v, d) IS DISTINCT FROM COALESCE(v, d) THEN
                    rev := rev + 1;
                    meta_bytes := octet_length(convert_to(actor, 'UTF8')) + COALESCE(octet_length(convert_to(why, 'UTF8')), 0);
                    n := 32 + octet_length(convert_to(k, 'UTF8')) + COALESCE(octet_length(convert_to(v, 'UTF8')), 0)
                        + meta_bytes + COALESCE(octet_length(convert_to(old_v, 'UTF8')), 0);
                    vals[j] := v; revs[j] := rev; dirty[j] := true;
                    env_rev[array_position(envs, env)] := rev;
                    c_rev := c_rev || rev; c_op := c_op || CASE WHEN v IS NULL THEN 'reset' ELSE 'set' END; c_subject := c_subject || k;
                    c_value := c_value || v; c_bytes := c_bytes || n; c_actor := c_actor || actor; c_reason := c_reason || why;
                    c_before := c_before || old_v; c_env := c_env || env;
                    bytes_total := bytes_total + n;
                    results := results || jsonb_build_object('c', jsonb_build_array(jsonb_build_array(
                        rev, 'preference'::text, CASE WHEN v IS NULL THEN 'reset' ELSE 'set' END, k, v, old_v, at, env)), 'r', rev, 'b', n);
                ELSE
                    results := results || jsonb_build_object('c', '[]'::jsonb, 'r', rev, 'b', 0);
                END IF;
            END LOOP;
            -- The rows, in three statements: change rows in revision order, then the last value
            -- of each preference changed, then each environment's revision.
            IF cardinality(c_rev) > 0 THEN
                INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before, environment)
                    SELECT u.r, 'preference', u.o, u.s, u.v, u.b, at, u.a, u.y, u.e, u.n
                      FROM unnest(c_rev, c_op, c_subject, c_value, c_bytes, c_actor, c_reason, c_before, c_env) AS u(r, o, s, v, b, a, y, e, n);
                INSERT INTO preference AS p (environment, key, value, revision)
                    SELECT u.n, u.k, u.v, u.r FROM unnest(key_envs, key_names, vals, revs, dirty) AS u(n, k, v, r, dirty) WHERE u.dirty
                    ON CONFLICT (environment, key) DO UPDATE SET value = excluded.value, revision = excluded.revision;
                UPDATE environment e SET revision = u.r FROM unnest(envs, env_rev) AS u(name, r) WHERE u.r IS NOT NULL AND e.name = u.name;
            END IF;
            RETURN jsonb_build_object('w', to_jsonb(results), 'r', rev, 'b', bytes_total);
        END
        $$
        """
}
