internal import PostgresNIO

/// Decodes the one-statement reads of ``PostgresStore`` (tagged `UNION ALL` rows, so every
/// part comes from one snapshot). Unexpected rows throw ``StoreError/database(_:)``.
enum PostgresSnapshotRows {
    /// Rows `(tag, number, number, text, text, text)`: 0 meta, 1 preference, 2 thing (each
    /// with its environment), 3 posts, 4 environment (name, copied from, created at).
    static func snapshot(from rows: [PostgresRow]) throws -> StoreSnapshot {
        var revision: Int64?
        var environments: [String: StoredEnvironment] = [:]
        var preferences: [(String, String, StoredPreference)] = []
        var things: [String: [(position: Int64, text: String)]] = [:]
        var posts: StoredPosts?
        var identity: String?
        for row in rows {
            let (tag, number, second, text, value, extra) = try row.decode((Int64, Int64, Int64, String?, String?, String?).self)
            switch (tag, text, extra) {
            case (0, _, _):
                revision = number
                identity = text
            case let (1, key?, environment?):
                preferences.append((environment, key, StoredPreference(json: value, revision: try unsigned(number))))
            case let (2, thing?, environment?):
                things[environment, default: []].append((number, thing))
            case let (3, document?, _):
                posts = StoredPosts(document: document, revision: try unsigned(number))
            case let (4, name?, createdAt?):
                environments[name] = StoredEnvironment(name: name, createdAt: Int64(createdAt) ?? 0, copiedFrom: value,
                                                       revision: try unsigned(number), thingsRevision: try unsigned(second))
            default:
                throw StoreError.database("unexpected snapshot row (tag \(tag))")
            }
        }
        guard let revision else { throw StoreError.database("the meta row is missing") }
        for (environment, key, preference) in preferences { environments[environment]?.preferences[key] = preference }
        for (environment, list) in things { environments[environment]?.things = list.sorted { $0.position < $1.position }.map(\.text) }
        let main = environments[EnvironmentName.default] ?? StoredEnvironment(name: EnvironmentName.default)
        environments[EnvironmentName.default] = main
        var snapshot = StoreSnapshot(
            revision: try unsigned(revision), preferences: main.preferences,
            things: main.things, thingsRevision: main.thingsRevision, posts: posts, identity: identity)
        snapshot.environments = environments
        return snapshot
    }

    /// Rows `(tag, revision, oldest, kind, op, subject, value, at, ...)`: tag 0 is the counter,
    /// the oldest retained change, the identity (in `kind`) and the commit time of the row at
    /// `after` (in `at`); tag 1 the changes after `after`, in order.
    static func changePage(from rows: [PostgresRow], after: UInt64) throws -> ChangePage {
        var current: Int64?
        var oldest: Int64?
        var identity: String?
        var committedAt: Int64?
        var changes: [Change] = []
        for row in rows {
            let (tag, revision, oldestRevision, kind, op, subject, value, at, actor, reason, before, environment) =
                try row.decode((Int64, Int64, Int64?, String?, String?, String?, String?, Int64?, String?, String?, String?, String?).self)
            if tag == 0 {
                current = revision
                oldest = oldestRevision
                identity = kind
                committedAt = at
                continue
            }
            guard let kind, let op else { throw StoreError.database("change row \(revision) without kind") }
            changes.append(try PostgresChangeRow(revision: revision, kind: kind, op: op, subject: subject, value: value,
                                                 at: at ?? 0, actor: actor ?? "", reason: reason, before: before,
                                                 environment: environment ?? EnvironmentName.default).change())
        }
        guard let current else { throw StoreError.database("the meta row is missing") }
        let currentRevision = try unsigned(current)
        var page = ChangePage(identity: identity, counter: currentRevision, committedAtReaderRevision: committedAt, changes: [])
        // The counter at or below what the reader applied: nothing to read (below: the
        // database went back, which the reader sees from the counter).
        guard currentRevision > after else { return page }
        // The change table is a contiguous run of revisions ending at the counter; the reader
        // needs it to start no later than after + 1.
        if oldest.map({ $0 > Int64(after) + 1 }) ?? true {
            let available = try oldest.map(unsigned) ?? currentRevision + 1
            throw StoreError.changesPruned(oldestAvailable: available)
        }
        var expected = after + 1
        for change in changes {
            guard change.revision == expected else {
                throw StoreError.database("change history has a gap: expected revision \(expected), found \(change.revision)")
            }
            expected += 1
        }
        page.changes = changes
        return page
    }

    static func unsigned(_ value: Int64) throws -> UInt64 {
        guard value >= 0 else { throw StoreError.database("negative revision \(value)") }
        return UInt64(value)
    }
}
