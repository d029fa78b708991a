/// Version 5's `tidings_commit_v3` and `tidings_as_of_v2`: group commit, checkpoints and
/// pruning, and as-of reads, per environment.
extension PostgresEnvironmentSchema {
    /// As `tidings_commit_v2`, through `tidings_apply_v3`: a checkpoint writes one row per
    /// environment, and pruning folds what it drops into each environment's base (the floor
    /// and its time are kept on `default`'s row; every base row has the floor's revision).
    /// Since schema version 9 a batch of plain sets goes through `tidings_sets_v1` (replaced in
    /// place: same signature and answers, so an instance of the version-8 build keeps working).
    static let commitFunction = """
        CREATE OR REPLACE FUNCTION tidings_commit_v3(batch jsonb, now bigint, max_count bigint, max_bytes bigint,
                                                     max_age bigint, keep_count bigint, keep_bytes bigint, checkpoint_every bigint)
        RETURNS jsonb LANGUAGE plpgsql AS $$
        DECLARE
            rev bigint; first_rev bigint; hist_bytes bigint; last_at bigint; at bigint;
            w jsonb; i integer; res jsonb; results jsonb[] := '{}'; cutoff bigint; r record;
            err_state text; err_msg text; err_detail text;
            oldest bigint; oldest_at bigint; cnt bigint; age_cut bigint;
            base_rev bigint; base jsonb; folded jsonb; lr bigint; lv text; la bigint; env_name text;
            cp jsonb; cp_bytes bigint; since bigint; freed bigint; answer jsonb;
        BEGIN
            SELECT m.revision, m.history_bytes, m.last_at INTO rev, hist_bytes, last_at
                FROM meta m WHERE m.id = 1 FOR UPDATE;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'tidings: the meta row is missing';
            END IF;
            first_rev := rev;
            at := GREATEST(now, last_at);
            -- A batch of plain sets (one `set` operation per write: nearly every batch under
            -- load) takes tidings_sets_v1, which writes its rows in three statements; any other
            -- batch goes write by write.
            IF NOT jsonb_path_exists(batch, '$[*] ? (!exists(@.o[0]) || @.o.size() != 1 || @.o[0].t != "set")') THEN
                res := tidings_sets_v1(batch, rev, at);
                rev := (res->>'r')::bigint;
                hist_bytes := hist_bytes + (res->>'b')::bigint;
                answer := res->'w';
            ELSE
                FOR i IN 0 .. jsonb_array_length(batch) - 1 LOOP
                    w := batch->i;
                    IF jsonb_array_length(w->'o') > 1 AND (w->'o' @> '[{"t": "add"}]' OR w->'o' @> '[{"t": "remove"}]') THEN
                        BEGIN
                            res := tidings_apply_v3(w, rev, at);
                        EXCEPTION WHEN OTHERS THEN
                            GET STACKED DIAGNOSTICS err_state = RETURNED_SQLSTATE, err_msg = MESSAGE_TEXT,
                                err_detail = PG_EXCEPTION_DETAIL;
                            res := jsonb_build_object('s', err_state, 'm', err_msg, 'd', err_detail);
                        END;
                    ELSE
                        res := tidings_apply_v3(w, rev, at);
                    END IF;
                    IF res ? 'c' THEN
                        rev := (res->>'r')::bigint;
                        hist_bytes := hist_bytes + (res->>'b')::bigint;
                    END IF;
                    results := results || res;
                END LOOP;
                answer := to_jsonb(results);
            END IF;
            \(upkeepBlock)
            RETURN answer;
        END
        $$
        """

    /// What every commit does once its changes are written (`rev` > `first_rev`: it changed
    /// something): a checkpoint per environment when the batch crossed a multiple of
    /// `checkpoint_every`, pruning by count, bytes and age (folding what it drops into the
    /// history base), the counter row, and the NOTIFY. Shared by `tidings_commit_v3` and, as
    /// `tidings_upkeep_v1`, by the batch-of-sets call (``PostgresSetBatchSchema``).
    static let upkeepBlock = """
        IF rev > first_rev THEN
            IF rev / checkpoint_every > first_rev / checkpoint_every THEN
                -- Per environment, a checkpoint only when its rows since its previous one hold
                -- at least its bytes (else replaying them is the cheaper read); its bytes
                -- count as history.
                FOR env_name IN SELECT e.name FROM environment e LOOP
                    cp := tidings_state_v2(at, env_name);
                    cp_bytes := octet_length(cp::text);
                    SELECT COALESCE(sum(c.bytes), 0) INTO since FROM change c
                     WHERE c.environment = env_name
                       AND c.revision > COALESCE((SELECT max(k.revision) FROM checkpoint k WHERE k.environment = env_name), 0);
                    IF since >= cp_bytes THEN
                        INSERT INTO checkpoint (revision, environment, state) VALUES (rev, env_name, cp)
                            ON CONFLICT (environment, revision) DO UPDATE SET state = excluded.state;
                        hist_bytes := hist_bytes + cp_bytes;
                    END IF;
                END LOOP;
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
                        SELECT b.revision INTO base_rev FROM history_base b WHERE b.environment = 'default' FOR UPDATE;
                        base_rev := COALESCE(base_rev, 0);
                        FOR env_name IN SELECT DISTINCT c.environment FROM change c
                                         WHERE c.revision > base_rev AND c.revision <= cutoff AND c.kind IN ('preference', 'things') LOOP
                            base := NULL;
                            SELECT b.state INTO base FROM history_base b WHERE b.environment = env_name FOR UPDATE;
                            base := COALESCE(base, '{}'::jsonb);
                            folded := NULL;
                            SELECT jsonb_object_agg(q.subject, jsonb_build_object('v', q.value, 'r', q.revision)) INTO folded
                              FROM (SELECT DISTINCT ON (c.subject) c.subject, c.value, c.revision FROM change c
                                     WHERE c.kind = 'preference' AND c.environment = env_name
                                       AND c.revision > base_rev AND c.revision <= cutoff
                                     ORDER BY c.subject, c.revision DESC) q;
                            IF folded IS NOT NULL THEN
                                base := jsonb_set(base, '{p}', COALESCE(base->'p', '{}'::jsonb) || folded);
                            END IF;
                            SELECT c.revision, c.value INTO lr, lv FROM change c
                             WHERE c.kind = 'things' AND c.environment = env_name AND c.revision > base_rev AND c.revision <= cutoff
                             ORDER BY c.revision DESC LIMIT 1;
                            IF FOUND THEN
                                base := base || jsonb_build_object('t', lv::jsonb, 'tr', lr);
                            END IF;
                            INSERT INTO history_base (environment, revision, state) VALUES (env_name, cutoff, base)
                                ON CONFLICT (environment) DO UPDATE SET state = excluded.state;
                        END LOOP;
                        IF cutoff > base_rev THEN
                            INSERT INTO history_base (environment, revision, state) VALUES ('default', cutoff, jsonb_build_object('a', la))
                                ON CONFLICT (environment) DO UPDATE SET state = history_base.state || jsonb_build_object('a', la);
                            UPDATE history_base SET revision = GREATEST(revision, cutoff),
                                                    state = state || jsonb_build_object('a', la);
                        END IF;
                        DELETE FROM change c WHERE c.revision <= cutoff;
                        SELECT COALESCE(sum(octet_length(k.state::text)), 0) INTO freed FROM checkpoint k WHERE k.revision <= cutoff;
                        hist_bytes := hist_bytes - freed;
                        DELETE FROM checkpoint k WHERE k.revision <= cutoff;
                    END IF;
                END IF;
            END IF;
            UPDATE meta SET revision = rev, history_bytes = GREATEST(hist_bytes, 0), last_at = at WHERE id = 1;
            PERFORM pg_notify('\(PostgresSchema.channel)', rev::text);
        END IF;
        """

    /// As `tidings_as_of_v1`, for environment `env` (the floor from `default`'s base row).
    static let asOfFunction = """
        CREATE OR REPLACE FUNCTION tidings_as_of_v2(want bigint, at_time bigint, env text)
        RETURNS jsonb LANGUAGE plpgsql STABLE AS $$
        DECLARE
            cur bigint; floor_rev bigint; floor_at bigint; base jsonb; target bigint; start_rev bigint; st jsonb;
            folded jsonb; lr bigint; lv text;
        BEGIN
            SELECT m.revision INTO cur FROM meta m WHERE m.id = 1;
            SELECT b.revision, COALESCE((b.state->>'a')::bigint, 0) INTO floor_rev, floor_at
              FROM history_base b WHERE b.environment = 'default';
            floor_rev := COALESCE(floor_rev, 0);
            floor_at := COALESCE(floor_at, 0);
            SELECT b.state INTO base FROM history_base b WHERE b.environment = env;
            base := COALESCE(base, '{}'::jsonb);
            IF at_time IS NULL THEN
                IF want > cur THEN
                    RETURN jsonb_build_object('s', 'future', 'd', cur);
                END IF;
                target := want;
            ELSE
                SELECT max(c.revision) INTO target FROM change c WHERE c.at <= at_time;
                IF target IS NULL THEN
                    IF floor_rev = 0 OR floor_at <= at_time THEN
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
             WHERE k.environment = env AND k.revision <= target AND k.revision >= floor_rev ORDER BY k.revision DESC LIMIT 1;
            IF NOT FOUND THEN
                start_rev := floor_rev;
                st := base;
            END IF;
            SELECT jsonb_object_agg(q.subject, jsonb_build_object('v', q.value, 'r', q.revision)) INTO folded
              FROM (SELECT DISTINCT ON (c.subject) c.subject, c.value, c.revision FROM change c
                     WHERE c.kind = 'preference' AND c.environment = env AND c.revision > start_rev AND c.revision <= target
                     ORDER BY c.subject, c.revision DESC) q;
            IF folded IS NOT NULL THEN
                st := jsonb_set(st, '{p}', COALESCE(st->'p', '{}'::jsonb) || folded);
            END IF;
            SELECT c.revision, c.value INTO lr, lv FROM change c
             WHERE c.kind = 'things' AND c.environment = env AND c.revision > start_rev AND c.revision <= target
             ORDER BY c.revision DESC LIMIT 1;
            IF FOUND THEN
                st := st || jsonb_build_object('t', lv::jsonb, 'tr', lr);
            END IF;
            RETURN jsonb_build_object('r', target, 'state', st);
        END
        $$
        """
}
