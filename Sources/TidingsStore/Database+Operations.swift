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

    /// Whether `environment` exists.
    func environmentExists(_ environment: String) throws -> Bool {
        try Bool.fetchOne(cachedStatement(sql: "SELECT 1 FROM environment WHERE name = ?"), arguments: [environment]) == true
    }

    /// `If-Match`: every named key's durable revision must be one the write accepts.
    func checkExpectedRevisions(_ expected: [String: Set<UInt64>], environment: String = EnvironmentName.default) throws {
        for (key, accepted) in expected.sorted(by: { $0.key < $1.key }) {
            let current = try Int64.fetchOne(
                cachedStatement(sql: "SELECT revision FROM preference WHERE environment = ? AND key = ?"), arguments: [environment, key]
            ).map(UInt64.init) ?? 0
            guard accepted.contains(current) else { throw StoreError.preconditionFailed(key: key, current: current) }
        }
    }

    /// Applies `operation` as revision `revision` and logs it with `stamp` (when, who, why);
    /// nil when it changed nothing (then the revision is not used).
    func apply(_ operation: WriteOperation, revision: UInt64, stamp: ChangeStamp = ChangeStamp(),
               environment env: String = EnvironmentName.default) throws -> Change? {
        let rev = Int64(revision)
        let kind: Change.Kind
        var before: String?
        var changeEnvironment = env
        switch operation {
        case let .setPreference(key, json, defaultJSON):
            let row = try Row.fetchOne(cachedStatement(sql: "SELECT value FROM preference WHERE environment = ? AND key = ?"),
                                       arguments: [env, key])
            let stored: String? = row?["value"]
            // Bytes, as PostgreSQL compares them (`IS DISTINCT FROM`): `String ==` is canonical
            // equivalence ("é" == "e\u{301}"), which made a change a no-op here alone, and costs
            // time quadratic in a run of combining marks.
            if (stored ?? defaultJSON).hasSameUTF8(as: json ?? defaultJSON) { return nil }
            before = stored
            do {
                try cachedStatement(sql: """
                    INSERT INTO preference (environment, key, value, revision) VALUES (?, ?, ?, ?)
                    ON CONFLICT (environment, key) DO UPDATE SET value = excluded.value, revision = excluded.revision
                    """).execute(arguments: [env, key, json, rev])
            } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_CHECK {
                throw StoreError.invalidJSON(key: key)
            }
            kind = .preference(key: key, json: json)
        case let .addThing(thing):
            if try Bool.fetchOne(cachedStatement(sql: "SELECT 1 FROM thing WHERE environment = ? AND text = ?"),
                                 arguments: [env, thing]) == true {
                throw StoreError.duplicateThing(thing)
            }
            try cachedStatement(sql: """
                INSERT INTO thing (environment, text, position)
                VALUES (?, ?, (SELECT COALESCE(MAX(position), 0) + 1 FROM thing WHERE environment = ?))
                """).execute(arguments: [env, thing, env])
            kind = .things(op: .add, thing: thing, list: try thingList(environment: env))
        case let .removeThing(thing):
            try cachedStatement(sql: "DELETE FROM thing WHERE environment = ? AND text = ?").execute(arguments: [env, thing])
            if changesCount == 0 { throw StoreError.thingNotFound(thing) }
            kind = .things(op: .remove, thing: thing, list: try thingList(environment: env))
        case let .replaceThings(things):
            if let repeated = things.firstRepeatedEntry { throw StoreError.duplicateThing(repeated) }
            let current = try thingList(environment: env)
            if current.elementsEqual(things, by: { $0.hasSameUTF8(as: $1) }) { return nil }
            before = ChangeRow.listJSON(current)
            try cachedStatement(sql: "DELETE FROM thing WHERE environment = ?").execute(arguments: [env])
            let insert = try cachedStatement(sql: "INSERT INTO thing (environment, text, position) VALUES (?, ?, ?)")
            for (index, thing) in things.enumerated() {
                try insert.execute(arguments: [env, thing, index + 1])
            }
            kind = .things(op: .replace, thing: nil, list: things)
        case let .setPosts(document):
            let stored = try String.fetchOne(cachedStatement(sql: "SELECT document FROM posts WHERE id = 1"))
            if let stored, stored.hasSameUTF8(as: document) { return nil }
            try cachedStatement(sql: """
                INSERT INTO posts (id, document, revision) VALUES (1, ?, ?)
                ON CONFLICT (id) DO UPDATE SET document = excluded.document, revision = excluded.revision
                """).execute(arguments: [document, rev])
            kind = .posts(document)
            changeEnvironment = EnvironmentName.default
        case let .createEnvironment(copiedFrom, limit):
            if try environmentExists(env) { throw StoreError.environmentExists(env) }
            let count = try Int.fetchOne(cachedStatement(sql: "SELECT COUNT(*) FROM environment")) ?? 0
            if count >= limit { throw StoreError.tooManyEnvironments(limit: limit) }
            try cachedStatement(sql: "INSERT INTO environment (name, createdAt, copiedFrom) VALUES (?, ?, ?)")
                .execute(arguments: [env, stamp.at, copiedFrom])
            kind = .environment(.created, copiedFrom: copiedFrom)
        case .deleteEnvironment:
            if env == EnvironmentName.default { throw StoreError.defaultEnvironment }
            try eraseEnvironment(env, at: stamp.at)
            kind = .environment(.deleted, copiedFrom: nil)
        }
        if case .things = kind {
            try cachedStatement(sql: "UPDATE environment SET thingsRevision = ? WHERE name = ?").execute(arguments: [rev, env])
        }
        switch kind {
        case .preference, .things, .environment(.created, _):
            try cachedStatement(sql: "UPDATE environment SET revision = ? WHERE name = ?").execute(arguments: [rev, env])
        case .posts, .environment:
            break
        }
        let change = Change(revision: revision, kind: kind, at: stamp.at, actor: stamp.actor, reason: stamp.reason, before: before,
                            environment: changeEnvironment)
        let row = ChangeRow(change.kind)
        try cachedStatement(sql: """
            INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before, environment)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: [rev, row.kind, row.op, row.subject, row.value, change.byteCount,
                                     stamp.at, stamp.actor, stamp.reason, before, changeEnvironment])
        try cachedStatement(sql: "UPDATE meta SET historyBytes = historyBytes + ? WHERE id = 1")
            .execute(arguments: [change.byteCount])
        return change
    }

    func thingList(environment: String = EnvironmentName.default) throws -> [String] {
        try String.fetchAll(cachedStatement(sql: "SELECT text FROM thing WHERE environment = ? ORDER BY position"),
                            arguments: [environment])
    }

    /// Deletes `environment`'s values, things, checkpoints and base, turns its history rows
    /// into erased rows (nothing but their revision and 32 bytes), keeping the byte total right,
    /// and cancels its pending schedules (finished `at`, claimed or not), so none of them fails
    /// later for want of its environment, nor comes back to life in one created again under the
    /// same name.
    func eraseEnvironment(_ environment: String, at: Int64) throws {
        guard try environmentExists(environment) else { throw StoreError.unknownEnvironment(environment) }
        let bytes = try Int64.fetchOne(cachedStatement(sql: "SELECT COALESCE(SUM(bytes - 32), 0) FROM change WHERE environment = ?"),
                                       arguments: [environment]) ?? 0
        try cachedStatement(sql: """
            UPDATE change SET kind = 'environment', op = 'erased', subject = NULL, value = NULL, bytes = 32,
                              actor = '', reason = NULL, before = NULL, environment = ''
             WHERE environment = ?
            """).execute(arguments: [environment])
        let checkpoints = try Int64.fetchOne(
            cachedStatement(sql: "SELECT COALESCE(SUM(LENGTH(CAST(state AS BLOB))), 0) FROM checkpoint WHERE environment = ?"),
            arguments: [environment]) ?? 0
        try cachedStatement(sql: "UPDATE meta SET historyBytes = MAX(0, historyBytes - ?) WHERE id = 1")
            .execute(arguments: [bytes + checkpoints])
        for table in ["preference", "thing", "checkpoint", "history_base"] {
            try execute(sql: "DELETE FROM \(table) WHERE environment = ?", arguments: [environment])
        }
        try cachedStatement(sql: "DELETE FROM environment WHERE name = ?").execute(arguments: [environment])
        try cancelPendingSchedules(environment: environment, at: at)
    }

    func readSnapshot() throws -> StoreSnapshot {
        let meta = try Row.fetchOne(self, sql: "SELECT revision, identity FROM meta WHERE id = 1")
        var environments: [String: StoredEnvironment] = [:]
        for row in try Row.fetchAll(self, sql: "SELECT name, createdAt, copiedFrom, thingsRevision, revision FROM environment") {
            let thingsRevision: Int64 = row["thingsRevision"]
            let revision: Int64 = row["revision"]
            let name: String = row["name"]
            environments[name] = StoredEnvironment(name: name, createdAt: row["createdAt"], copiedFrom: row["copiedFrom"],
                                                   revision: UInt64(revision), things: try thingList(environment: name),
                                                   thingsRevision: UInt64(thingsRevision))
        }
        for row in try Row.fetchAll(self, sql: "SELECT environment, key, value, revision FROM preference") {
            let revision: Int64 = row["revision"]
            environments[row["environment"]]?.preferences[row["key"]] = StoredPreference(json: row["value"], revision: UInt64(revision))
        }
        let posts = try Row.fetchOne(self, sql: "SELECT document, revision FROM posts WHERE id = 1").map { row -> StoredPosts in
            let revision: Int64 = row["revision"]
            return StoredPosts(document: row["document"], revision: UInt64(revision))
        }
        let revision: Int64 = meta?["revision"] ?? 0
        let main = environments[EnvironmentName.default] ?? StoredEnvironment(name: EnvironmentName.default)
        var snapshot = StoreSnapshot(
            revision: UInt64(revision), preferences: main.preferences,
            things: main.things, thingsRevision: main.thingsRevision, posts: posts, identity: meta?["identity"])
        environments[EnvironmentName.default] = main
        snapshot.environments = environments
        return snapshot
    }

    /// Change rows after `revision`, in order, at most `limit`, with the database's identity,
    /// its counter and the commit time of the row at `revision` (one read transaction). Throws
    /// ``StoreError/changesPruned(oldestAvailable:)`` when the counter is not below `revision`
    /// but the row right after `revision` is gone.
    func readChangePage(after revision: UInt64, limit: Int) throws -> ChangePage {
        let meta = try Row.fetchOne(cachedStatement(sql: "SELECT revision, identity FROM meta WHERE id = 1"))
        let counter: Int64 = meta?["revision"] ?? 0
        let current = UInt64(counter)
        let at = revision == 0 ? nil : try Int64.fetchOne(
            cachedStatement(sql: "SELECT at FROM change WHERE revision = ?"), arguments: [Int64(clamping: revision)])
        var page = ChangePage(identity: meta?["identity"], counter: current, committedAtReaderRevision: at, changes: [])
        guard current > revision, limit > 0 else { return page }
        let oldest = try Int64.fetchOne(self, sql: "SELECT MIN(revision) FROM change").map(UInt64.init)
        // Every revision is logged, so the log must start at revision + 1 or earlier.
        if oldest.map({ $0 > revision + 1 }) ?? true {
            throw StoreError.changesPruned(oldestAvailable: oldest ?? current + 1)
        }
        page.changes = try Row.fetchAll(
            cachedStatement(sql: "SELECT \(Self.changeColumns) FROM change WHERE revision > ? ORDER BY revision LIMIT ?"),
            arguments: [Int64(revision), limit]
        ).map(Self.change)
        return page
    }

    /// The newest rows, oldest first, within `maxCount` rows and `maxBytes` bytes.
    func readRecentChanges(maxCount: Int, maxBytes: Int) throws -> [Change] {
        guard maxCount > 0, maxBytes > 0 else { return [] }
        var result: [Change] = []
        var total = 0
        let rows = try Row.fetchCursor(self, sql: "SELECT \(Self.changeColumns), bytes FROM change ORDER BY revision DESC LIMIT ?",
                                       arguments: [maxCount])
        while let row = try rows.next() {
            let bytes: Int = row["bytes"]
            guard total + bytes <= maxBytes else { break }
            total += bytes
            result.append(try Self.change(row))
        }
        return result.reversed()
    }

    /// The columns ``change(_:)`` reads.
    static let changeColumns = "revision, kind, op, subject, value, at, actor, reason, before, environment"

    static func change(_ row: Row) throws -> Change {
        let revision: Int64 = row["revision"]
        guard let kind = ChangeRow(kind: row["kind"], op: row["op"], subject: row["subject"], value: row["value"]).decoded else {
            throw StoreError.database("unreadable change-log entry at revision \(revision)")
        }
        return Change(revision: UInt64(revision), kind: kind, at: row["at"], actor: row["actor"],
                      reason: row["reason"], before: row["before"], environment: row["environment"])
    }
}

/// When, by whom and why the changes of one write were made.
struct ChangeStamp: Sendable {
    var at: Int64 = 0
    var actor: String = ""
    var reason: String?
}

/// How a change is spelled in the change table (shared by both stores' encodings).
struct ChangeRow {
    var kind: String
    var op: String?
    var subject: String?
    var value: String?

    init(kind: String, op: String?, subject: String?, value: String?) {
        self.kind = kind
        self.op = op
        self.subject = subject
        self.value = value
    }

    init(_ kind: Change.Kind) {
        switch kind {
        case let .preference(key, json): self.init(kind: "preference", op: nil, subject: key, value: json)
        case let .things(op, thing, list):
            self.init(kind: "things", op: op.rawValue, subject: thing, value: Self.listJSON(list))
        case let .posts(document): self.init(kind: "posts", op: nil, subject: nil, value: document)
        case let .environment(op, copiedFrom): self.init(kind: "environment", op: op.rawValue, subject: copiedFrom, value: nil)
        }
    }

    /// A thing list as the change table spells it (a JSON array).
    static func listJSON(_ list: [String]) -> String {
        let data = (try? JSONEncoder().encode(list)) ?? Data("[]".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    var decoded: Change.Kind? {
        switch kind {
        case "preference":
            guard let subject else { return nil }
            return .preference(key: subject, json: value)
        case "things":
            guard let op = op.flatMap(Change.ThingsOp.init(rawValue:)), let value,
                  let list = try? JSONDecoder().decode([String].self, from: Data(value.utf8)) else { return nil }
            return .things(op: op, thing: subject, list: list)
        case "posts":
            return value.map(Change.Kind.posts)
        case "environment":
            guard let op = op.flatMap(Change.EnvironmentOp.init(rawValue:)) else { return nil }
            return .environment(op, copiedFrom: subject)
        default:
            return nil
        }
    }
}
