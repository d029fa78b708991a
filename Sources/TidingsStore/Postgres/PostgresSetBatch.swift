import Foundation
import Logging
internal import PostgresNIO

/// A batch in which every write sets or resets one preference, with no `If-Match` and no
/// schedule: what nearly every batch under load is. It goes to `tidings_set_batch_v1`
/// (``PostgresSetBatchSchema``) as arrays, one element per write, and comes back as one row per
/// write — no JSON on either side. Any other batch goes through `tidings_commit_v3`
/// (``PostgresBatch``).
struct PostgresSetBatch: Sendable {
    var keys: [String] = []
    /// The value's JSON text; "" where `resets` says the write resets the key (the arrays
    /// postgres-nio encodes hold no NULL, and no JSON text is empty).
    var values: [String] = []
    var resets: [Bool] = []
    var defaults: [String] = []
    var environments: [String] = []
    var actors: [String] = []
    /// "" where `hasReason` says there is none.
    var reasons: [String] = []
    var hasReason: [Bool] = []

    /// The batch of `writes`, or nil when one of them is not a plain set.
    init?(_ writes: [StoreWrite]) {
        guard !writes.isEmpty else { return nil }
        keys.reserveCapacity(writes.count)
        for write in writes {
            guard write.operations.count == 1, case let .setPreference(key, json, defaultJSON) = write.operations[0],
                  write.expectedRevisions.isEmpty, write.expectedGlobalRevisions == nil, write.schedule == nil
            else { return nil }
            keys.append(key)
            values.append(json ?? "")
            resets.append(json == nil)
            defaults.append(defaultJSON)
            environments.append(write.environment)
            actors.append(write.actor)
            reasons.append(write.reason ?? "")
            hasReason.append(write.reason != nil)
        }
    }

    /// One row of the function's answer: `state` `c` (changed at `revision`, replacing
    /// `before`), `n` (nothing to change) or `E` (no such environment); `at`, the commit time.
    struct Row: Sendable, Equatable {
        var state: String
        var revision: Int64?
        var before: String?
        var at: Int64
    }

    /// Each write's result from the function's rows (one per write, in order).
    func results(_ rows: [Row], writes: [StoreWrite]) throws -> [Result<[Change], StoreError>] {
        guard rows.count == writes.count, writes.count == keys.count else {
            throw StoreError.database("the set batch answered \(rows.count) rows for \(writes.count) writes")
        }
        return try rows.indices.map { index in
            let row = rows[index]
            switch row.state {
            case "c":
                guard let revision = row.revision, revision > 0 else {
                    throw StoreError.database("the set batch answered a change without a revision")
                }
                let write = writes[index]
                return .success([Change(
                    revision: UInt64(revision), kind: .preference(key: keys[index], json: resets[index] ? nil : values[index]),
                    at: row.at, actor: write.actor, reason: write.reason, before: row.before, environment: environments[index])])
            case "n":
                return .success([])
            case "E":
                return .failure(.unknownEnvironment(environments[index]))
            default:
                throw StoreError.database("the set batch answered state '\(row.state)'")
            }
        }
    }
}

extension PostgresStore {
    /// Commits `batch` (the writes `writes`) in one call of `tidings_set_batch_v1`.
    static func commitSets(
        _ batch: PostgresSetBatch, writes: [StoreWrite], call: CommitCall, on connection: PostgresConnection, logger: Logger
    ) async throws -> [Result<[Change], StoreError>] {
        let rows = try await connection.query(
            """
            SELECT w_state, w_rev, w_before, w_at FROM tidings_set_batch_v1(
                \(batch.keys), \(batch.values), \(batch.resets), \(batch.defaults), \(batch.environments), \(batch.actors),
                \(batch.reasons), \(batch.hasReason), \(call.now), \(call.maxCount), \(call.maxBytes), \(call.maxAge),
                \(call.keepCount), \(call.keepBytes), \(call.every))
            """,
            logger: logger)
        var answered: [PostgresSetBatch.Row] = []
        answered.reserveCapacity(writes.count)
        for try await (state, revision, before, at) in rows.decode((String, Int64?, String?, Int64).self) {
            answered.append(PostgresSetBatch.Row(state: state, revision: revision, before: before, at: at))
        }
        return try batch.results(answered, writes: writes)
    }
}
