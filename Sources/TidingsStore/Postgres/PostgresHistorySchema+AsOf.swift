/// Version 3's `tidings_as_of_v1`: the state as of a revision or an instant, for history reads.
extension PostgresHistorySchema {
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
