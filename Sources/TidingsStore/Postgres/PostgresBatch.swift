import Foundation

/// Turns queued writes into the JSON argument of `tidings_commit_v1` and its JSON answer back
/// into per-write results.
enum PostgresBatch {
    /// Checks a write that needs no database state and that only PostgreSQL needs checked
    /// before the batch (what every store refuses is ``StoreWrite/unstorableReason``): a
    /// replacement list that repeats an entry. Returns the error the write fails with.
    static func precheck(_ write: StoreWrite) -> StoreError? {
        for case let .replaceThings(things) in write.operations {
            if let repeated = things.firstRepeatedEntry { return .duplicateThing(repeated) }
        }
        return nil
    }

    /// The JSON text of `writes` for `tidings_commit_v1`.
    static func encode(_ writes: [StoreWrite]) throws -> String {
        let payload = writes.map { write -> [String: Any] in
            var entry: [String: Any] = ["o": write.operations.map(encode), "a": write.actor, "n": write.environment]
            if let reason = write.reason { entry["y"] = reason }
            if let global = write.expectedGlobalRevisions {
                entry["g"] = global.filter { $0 <= UInt64(Int64.max) }.sorted().map { Int64($0) }
            }
            if !write.expectedRevisions.isEmpty {
                // Revisions are bigint in SQL: one beyond Int64.max can never match, so it is
                // left out (a set left empty matches nothing, as it should).
                entry["e"] = write.expectedRevisions.mapValues { revisions in
                    revisions.filter { $0 <= UInt64(Int64.max) }.sorted().map { Int64($0) }
                }
            }
            return entry
        }
        let data = try JSONSerialization.data(withJSONObject: payload, options: [])
        return String(decoding: data, as: UTF8.self)
    }

    private static func encode(_ operation: WriteOperation) -> [String: Any] {
        switch operation {
        case let .setPreference(key, json, defaultJSON):
            var entry: [String: Any] = ["t": "set", "k": key, "d": defaultJSON]
            if let json { entry["v"] = json }
            return entry
        case let .addThing(thing): return ["t": "add", "x": thing]
        case let .removeThing(thing): return ["t": "remove", "x": thing]
        case let .replaceThings(things): return ["t": "replace", "l": things]
        case let .setPosts(document): return ["t": "posts", "x": document]
        case let .createEnvironment(copiedFrom, limit):
            var entry: [String: Any] = ["t": "create", "l": limit]
            if let copiedFrom { entry["f"] = copiedFrom }
            return entry
        case .deleteEnvironment: return ["t": "delete"]
        }
    }

    /// The per-write results of a batch of `count` writes from the function's JSON answer.
    static func decode(_ text: String, writes: [StoreWrite]) throws -> [Result<[Change], StoreError>] {
        let count = writes.count
        let outcomes: [PostgresWriteOutcome]
        do {
            outcomes = try JSONDecoder().decode([PostgresWriteOutcome].self, from: Data(text.utf8))
        } catch {
            throw StoreError.database("unreadable commit result: \(error)")
        }
        guard outcomes.count == count else {
            throw StoreError.database("commit result has \(outcomes.count) entries for \(count) writes")
        }
        return zip(outcomes, writes).map { outcome, write in
            switch outcome {
            case let .changes(rows):
                do {
                    let changes = try rows.map { row in
                        var row = row
                        row.actor = write.actor
                        row.reason = write.reason
                        return try row.change()
                    }
                    return .success(changes)
                } catch let error as StoreError {
                    return .failure(error)
                } catch {
                    return .failure(.database("\(error)"))
                }
            case let .failed(sqlState, message, detail):
                return .failure(error(sqlState: sqlState, message: message, detail: detail))
            }
        }
    }

    /// The ``StoreError`` for a write's failure inside `tidings_commit_v1`.
    static func error(sqlState: String, message: String, detail: String?) -> StoreError {
        switch sqlState {
        case "TD412":
            guard let current = detail.flatMap(UInt64.init) else {
                return .database("If-Match failure without a current revision for \(message)")
            }
            return .preconditionFailed(key: message, current: current)
        case "TD409": return .duplicateThing(message)
        case "TD404": return .thingNotFound(message)
        case "TD404E": return .unknownEnvironment(message)
        case "TD409E": return .environmentExists(message)
        case "TD409M": return .tooManyEnvironments(limit: detail.flatMap(Int.init) ?? 0)
        case "TD409D": return .defaultEnvironment
        default: return .database("PostgreSQL \(sqlState): \(message)")
        }
    }
}
