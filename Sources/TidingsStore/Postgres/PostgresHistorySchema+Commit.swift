/// Version 3's `tidings_commit_v2`: group commit with commit times, checkpoints and pruning
/// (folding what it drops into `history_base`).
extension PostgresHistorySchema {
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
            cp jsonb; cp_bytes bigint; since bigint; freed bigint;
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
                -- A checkpoint only when the rows since the previous one hold at least its
                -- bytes (else replaying them is the cheaper read); its bytes count as history.
                IF rev / checkpoint_every > first_rev / checkpoint_every THEN
                    cp := tidings_state_v1(at, things_rev);
                    cp_bytes := octet_length(cp::text);
                    SELECT COALESCE(sum(c.bytes), 0) INTO since FROM change c
                     WHERE c.revision > COALESCE((SELECT max(k.revision) FROM checkpoint k), 0);
                    IF since >= cp_bytes THEN
                        INSERT INTO checkpoint (revision, state) VALUES (rev, cp)
                            ON CONFLICT (revision) DO UPDATE SET state = excluded.state;
                        hist_bytes := hist_bytes + cp_bytes;
                    END IF;
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
                            SELECT COALESCE(sum(octet_length(k.state::text)), 0) INTO freed FROM checkpoint k WHERE k.revision <= cutoff;
                            hist_bytes := hist_bytes - freed;
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
}
