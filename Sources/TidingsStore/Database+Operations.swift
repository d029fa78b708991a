import Foundation
internal import GRDB

/// Reading and writing the store's rows. Every function runs on a connection the caller already
/// holds (inside the writer's transaction, or a read).
extension Database {
    func storedRevision() throws -> UInt64 {
        let value = try Int64.fetchOne(cachedStatement(sql: "SELECT revision FROM meta WHERE id = 1")) ?? 0
        return UInt64(value)
    }

    func setStoredRevision(_ revision: UInt64) throws {
        try cachedStatement(sql: "UPDATE meta SET revision = ? WHERE id = 1")
            .execute(arguments: [Int64(revision)])
    }

    /// Applies one operation as revision `revision` and appends it to the change log.
    func apply(_ operation: StoreOperation, revision: UInt64, origin: String) throws {
        let rev = Int64(revision)
        switch operation {
        case let .setPreference(key, json):
            do {
                try cachedStatement(sql: """
                    INSERT INTO preference (key, value, revision) VALUES (?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value, revision = excluded.revision
                    """).execute(arguments: [key, json, rev])
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_CHECK {
                throw StoreError.invalidJSON(key: key)
            }
        case let .resetPreference(key):
            try cachedStatement(sql: """
                INSERT INTO preference (key, value, revision) VALUES (?, NULL, ?)
                ON CONFLICT (key) DO UPDATE SET value = NULL, revision = excluded.revision
                """).execute(arguments: [key, rev])
        case let .addThing(thing):
            if try Bool.fetchOne(cachedStatement(sql: "SELECT 1 FROM thing WHERE text = ?"), arguments: [thing]) == true {
                throw StoreError.duplicateThing(thing)
            }
            try cachedStatement(sql: """
                INSERT INTO thing (text, position)
                VALUES (?, (SELECT COALESCE(MAX(position), 0) + 1 FROM thing))
                """).execute(arguments: [thing])
            try setThingsRevision(rev)
        case let .removeThing(thing):
            try cachedStatement(sql: "DELETE FROM thing WHERE text = ?").execute(arguments: [thing])
            if changesCount == 0 { throw StoreError.thingNotFound(thing) }
            try setThingsRevision(rev)
        case let .replaceThings(things):
            var seen = Set<String>()
            for thing in things where !seen.insert(thing).inserted {
                throw StoreError.duplicateThing(thing)
            }
            try execute(sql: "DELETE FROM thing")
            let insert = try cachedStatement(sql: "INSERT INTO thing (text, position) VALUES (?, ?)")
            for (index, thing) in things.enumerated() {
                try insert.execute(arguments: [thing, index + 1])
            }
            try setThingsRevision(rev)
        case .announce:
            break
        }
        let row = ChangeRow(operation)
        try cachedStatement(sql: "INSERT INTO change (revision, origin, op, subject, value) VALUES (?, ?, ?, ?, ?)")
            .execute(arguments: [rev, origin, row.op, row.subject, row.value])
    }

    private func setThingsRevision(_ revision: Int64) throws {
        try cachedStatement(sql: "UPDATE meta SET thingsRevision = ? WHERE id = 1").execute(arguments: [revision])
    }

    /// Drops change-log entries more than `retention` revisions behind `revision`.
    func pruneChanges(upTo revision: UInt64, retention: UInt64) throws {
        guard revision > retention else { return }
        try cachedStatement(sql: "DELETE FROM change WHERE revision <= ?")
            .execute(arguments: [Int64(revision - retention)])
    }

    func readSnapshot() throws -> StoreSnapshot {
        let meta = try Row.fetchOne(self, sql: "SELECT revision, thingsRevision FROM meta WHERE id = 1")
        var preferences: [String: StoredPreference] = [:]
        for row in try Row.fetchAll(self, sql: "SELECT key, value, revision FROM preference") {
            let revision: Int64 = row["revision"]
            preferences[row["key"]] = StoredPreference(json: row["value"], revision: UInt64(revision))
        }
        let things = try String.fetchAll(self, sql: "SELECT text FROM thing ORDER BY position")
        let revision: Int64 = meta?["revision"] ?? 0
        let thingsRevision: Int64 = meta?["thingsRevision"] ?? 0
        return StoreSnapshot(
            revision: UInt64(revision), preferences: preferences,
            things: things, thingsRevision: UInt64(thingsRevision))
    }

    /// Change-log entries after `revision`, in order. Throws ``StoreError/changesPruned(oldestAvailable:)``
    /// when entries right after `revision` were pruned.
    func readChanges(after revision: UInt64, origin: String, excludingOrigin: Bool = false) throws -> [StoredChange] {
        let current = try storedRevision()
        guard current > revision else { return [] }
        let oldest = try Int64.fetchOne(self, sql: "SELECT MIN(revision) FROM change").map(UInt64.init)
        // Every revision is logged, so the log must start at revision + 1 or earlier.
        if oldest.map({ $0 > revision + 1 }) ?? true {
            throw StoreError.changesPruned(oldestAvailable: oldest ?? current + 1)
        }
        let sql = excludingOrigin
            ? "SELECT revision, origin, op, subject, value FROM change WHERE revision > ? AND origin <> ? ORDER BY revision"
            : "SELECT revision, origin, op, subject, value FROM change WHERE revision > ? ORDER BY revision"
        let arguments: StatementArguments = excludingOrigin ? [Int64(revision), origin] : [Int64(revision)]
        return try Row.fetchAll(self, sql: sql, arguments: arguments).map { row in
            let rev: Int64 = row["revision"]
            let rowOrigin: String = row["origin"]
            let change = ChangeRow(op: row["op"], subject: row["subject"], value: row["value"])
            guard let operation = change.operation else {
                throw StoreError.database("unreadable change-log entry at revision \(rev)")
            }
            return StoredChange(revision: UInt64(rev), operation: operation, isLocal: rowOrigin == origin)
        }
    }
}

/// How an operation is spelled in the change log.
struct ChangeRow {
    var op: String
    var subject: String?
    var value: String?

    init(op: String, subject: String?, value: String?) {
        self.op = op
        self.subject = subject
        self.value = value
    }

    init(_ operation: StoreOperation) {
        switch operation {
        case let .setPreference(key, json): self.init(op: "set", subject: key, value: json)
        case let .resetPreference(key): self.init(op: "reset", subject: key, value: nil)
        case let .addThing(thing): self.init(op: "add", subject: thing, value: nil)
        case let .removeThing(thing): self.init(op: "remove", subject: thing, value: nil)
        case let .announce(topic): self.init(op: "announce", subject: topic, value: nil)
        case let .replaceThings(things):
            let data = (try? JSONEncoder().encode(things)) ?? Data("[]".utf8)
            self.init(op: "replace", subject: nil, value: String(decoding: data, as: UTF8.self))
        }
    }

    var operation: StoreOperation? {
        switch (op, subject, value) {
        case let ("set", key?, json?): return .setPreference(key: key, json: json)
        case let ("reset", key?, _): return .resetPreference(key: key)
        case let ("add", thing?, _): return .addThing(thing)
        case let ("remove", thing?, _): return .removeThing(thing)
        case let ("announce", topic?, _): return .announce(topic: topic)
        case let ("replace", _, json?):
            return (try? JSONDecoder().decode([String].self, from: Data(json.utf8))).map(StoreOperation.replaceThings)
        default: return nil
        }
    }
}
