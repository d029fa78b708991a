import Foundation
internal import GRDB

/// The history on SQLite: checkpoints, the history base, retention, as-of reads and pages.
/// Every function runs on a connection the caller holds (the writer's transaction or a read).
extension Database {
    // MARK: Checkpoints and the base

    /// The state of the tables before environments (schema v4 and v5), as a checkpoint: what
    /// migration v4 starts the history base from.
    func legacyCheckpointState() throws -> CheckpointState {
        var state = CheckpointState()
        for row in try Row.fetchAll(self, sql: "SELECT key, value, revision FROM preference") {
            let revision: Int64 = row["revision"]
            state.p[row["key"]] = CheckpointState.Entry(v: row["value"], r: UInt64(revision))
        }
        state.t = try String.fetchAll(self, sql: "SELECT text FROM thing ORDER BY position")
        let meta = try Row.fetchOne(self, sql: "SELECT thingsRevision, lastAt FROM meta WHERE id = 1")
        let thingsRevision: Int64 = meta?["thingsRevision"] ?? 0
        state.tr = UInt64(thingsRevision)
        state.a = meta?["lastAt"] ?? 0
        return state
    }

    /// The state `environment` holds now, as a checkpoint.
    func currentCheckpointState(environment: String) throws -> CheckpointState {
        var state = CheckpointState()
        for row in try Row.fetchAll(cachedStatement(sql: "SELECT key, value, revision FROM preference WHERE environment = ?"),
                                    arguments: [environment]) {
            let revision: Int64 = row["revision"]
            state.p[row["key"]] = CheckpointState.Entry(v: row["value"], r: UInt64(revision))
        }
        state.t = try thingList(environment: environment)
        let thingsRevision = try Int64.fetchOne(cachedStatement(sql: "SELECT thingsRevision FROM environment WHERE name = ?"),
                                                arguments: [environment]) ?? 0
        state.tr = UInt64(thingsRevision)
        state.a = try Int64.fetchOne(cachedStatement(sql: "SELECT lastAt FROM meta WHERE id = 1")) ?? 0
        return state
    }

    /// Writes a checkpoint of each environment's current state as revision `revision` (inside
    /// the commit), unless that environment's change rows since its previous one hold fewer
    /// bytes than it would: then an as-of read replays those rows for less than reading the
    /// checkpoint costs, and a large state changed by small writes does not fill the disk with
    /// copies of itself. What a checkpoint holds counts against `--history-bytes` like the rows
    /// (``HistoryCheckpoints``).
    func writeCheckpoint(revision: UInt64) throws {
        for environment in try String.fetchAll(cachedStatement(sql: "SELECT name FROM environment")) {
            let json = try currentCheckpointState(environment: environment).json
            let previous = try Int64.fetchOne(cachedStatement(sql: "SELECT MAX(revision) FROM checkpoint WHERE environment = ?"),
                                              arguments: [environment]) ?? 0
            let since = try Int64.fetchOne(
                cachedStatement(sql: "SELECT COALESCE(SUM(bytes), 0) FROM change WHERE revision > ? AND environment = ?"),
                arguments: [previous, environment]) ?? 0
            let size = Int64(json.utf8.count)
            guard since >= size else { continue }
            try cachedStatement(sql: "INSERT OR REPLACE INTO checkpoint (revision, environment, state) VALUES (?, ?, ?)")
                .execute(arguments: [Int64(revision), environment, json])
            try cachedStatement(sql: "UPDATE meta SET historyBytes = historyBytes + ? WHERE id = 1").execute(arguments: [size])
        }
    }

    /// The history floor (the revision just before the oldest retained change row) and when it
    /// was committed (0: unknown), kept on `default`'s base row.
    func historyFloor() throws -> (revision: UInt64, at: Int64) {
        guard let row = try Row.fetchOne(cachedStatement(sql: "SELECT revision, state FROM history_base WHERE environment = ?"),
                                         arguments: [EnvironmentName.default]) else { return (0, 0) }
        let revision: Int64 = row["revision"]
        return (UInt64(revision), try CheckpointState.decode(row["state"]).a)
    }

    /// `environment`'s history base: its state just before the oldest retained change row.
    func historyBase(environment: String = EnvironmentName.default) throws -> (revision: UInt64, state: CheckpointState) {
        let (floor, at) = try historyFloor()
        guard let text = try String.fetchOne(cachedStatement(sql: "SELECT state FROM history_base WHERE environment = ?"),
                                             arguments: [environment]) else {
            var empty = CheckpointState()
            empty.a = at
            return (floor, empty)
        }
        return (floor, try CheckpointState.decode(text))
    }

    /// The clock of the commit: `now`, but never earlier than the last commit's (so `at`
    /// follows revision order even if the clock steps back or instances' clocks differ).
    func commitTime(now: Int64) throws -> Int64 {
        let last = try Int64.fetchOne(cachedStatement(sql: "SELECT lastAt FROM meta WHERE id = 1")) ?? 0
        return max(now, last)
    }

    func setLastCommitTime(_ at: Int64) throws {
        try cachedStatement(sql: "UPDATE meta SET lastAt = ? WHERE id = 1").execute(arguments: [at])
    }

    // MARK: Retention

    /// Drops the oldest change rows while an upper bound of `limits` is exceeded (count, bytes,
    /// age against `now`) and the row is outside the kept window (the newest `keepCount` rows
    /// within `keepBytes`). What the dropped rows set is folded into the history base, so the
    /// state at every retained revision can still be read.
    func pruneHistory(_ limits: ChangeStoreLimits, now: Int64) throws {
        guard let meta = try Row.fetchOne(cachedStatement(sql: "SELECT revision, historyBytes FROM meta WHERE id = 1")) else { return }
        let revision: Int64 = meta["revision"]
        var bytes: Int64 = meta["historyBytes"]
        guard var oldest = try Int64.fetchOne(cachedStatement(sql: "SELECT MIN(revision) FROM change")) else { return }
        var count = revision - oldest + 1
        let ageCut = limits.ageMicroseconds.map { now - $0 }
        func mustGo(_ at: Int64) -> Bool {
            count > Int64(limits.historyCount) || bytes > Int64(limits.historyBytes) || (ageCut.map { at < $0 } ?? false)
        }
        func kept() -> Bool { count <= Int64(limits.keepCount) && bytes <= Int64(limits.keepBytes) }
        let oldestAt = try Int64.fetchOne(cachedStatement(sql: "SELECT at FROM change WHERE revision = ?"), arguments: [oldest]) ?? 0
        guard mustGo(oldestAt), !kept() else { return }

        var (baseRevision, lastAt) = try historyFloor()
        var bases: [String: CheckpointState] = [:]
        var removedBytes: Int64 = 0
        var last: Int64?
        scan: while true {
            let rows = try Row.fetchAll(
                cachedStatement(sql: "SELECT \(Self.changeColumns), bytes FROM change WHERE revision >= ? ORDER BY revision LIMIT 256"),
                arguments: [oldest])
            if rows.isEmpty { break }
            for row in rows {
                let at: Int64 = row["at"]
                guard mustGo(at), !kept() else { break scan }
                let change = try Self.change(row)
                if change.revision > baseRevision {
                    switch change.kind {
                    case .preference, .things:
                        if bases[change.environment] == nil {
                            bases[change.environment] = try historyBase(environment: change.environment).state
                        }
                        bases[change.environment]?.fold(change.kind, revision: change.revision)
                    case .posts, .environment:
                        break
                    }
                    lastAt = change.at
                }
                let rowBytes: Int64 = row["bytes"]
                bytes -= rowBytes
                removedBytes += rowBytes
                count -= 1
                last = Int64(change.revision)
            }
            oldest = (last ?? oldest) + 1
            if count <= 0 { break }
        }
        guard let last else { return }
        try cachedStatement(sql: "DELETE FROM change WHERE revision <= ?").execute(arguments: [last])
        removedBytes += try Int64.fetchOne(cachedStatement(sql: "SELECT COALESCE(SUM(LENGTH(CAST(state AS BLOB))), 0) FROM checkpoint WHERE revision <= ?"),
                                           arguments: [last]) ?? 0
        try cachedStatement(sql: "DELETE FROM checkpoint WHERE revision <= ?").execute(arguments: [last])
        baseRevision = max(baseRevision, UInt64(last))
        if bases[EnvironmentName.default] == nil { bases[EnvironmentName.default] = try historyBase().state }
        for (environment, var base) in bases {
            base.a = lastAt
            try cachedStatement(sql: "INSERT OR REPLACE INTO history_base (environment, revision, state) VALUES (?, ?, ?)")
                .execute(arguments: [environment, Int64(baseRevision), base.json])
        }
        // Every environment's base moves to the new floor (a base's revision is the floor's).
        try cachedStatement(sql: "UPDATE history_base SET revision = ?").execute(arguments: [Int64(baseRevision)])
        if removedBytes > 0 {
            try cachedStatement(sql: "UPDATE meta SET historyBytes = MAX(0, historyBytes - ?) WHERE id = 1").execute(arguments: [removedBytes])
        }
    }

    // MARK: Reads

    /// The state as of `point` (see ``HistoryStore/state(asOf:)``).
    func readState(asOf point: HistoryPoint, environment: String = EnvironmentName.default) throws -> HistoricalState {
        let current = try storedRevision()
        let (floor, base) = try historyBase(environment: environment)
        let revision: UInt64
        switch point {
        case let .revision(wanted):
            guard wanted <= current else { throw StoreError.futureRevision(current: current) }
            revision = wanted
        case let .time(time):
            if let found = try Int64.fetchOne(cachedStatement(sql: "SELECT MAX(revision) FROM change WHERE at <= ?"), arguments: [time]) {
                revision = UInt64(found)
            } else if floor == 0 || base.a <= time {
                // Nothing retained was committed by then: the base's revision was (or nothing).
                revision = floor
            } else {
                throw StoreError.beyondHistory(oldestReadable: floor)
            }
        }
        guard revision >= floor else { throw StoreError.beyondHistory(oldestReadable: floor) }
        var state = base
        var start = floor
        if let row = try Row.fetchOne(
            cachedStatement(sql: """
                SELECT revision, state FROM checkpoint WHERE environment = ? AND revision <= ? AND revision >= ?
                 ORDER BY revision DESC LIMIT 1
                """),
            arguments: [environment, Int64(revision), Int64(floor)]) {
            let checkpoint: Int64 = row["revision"]
            start = UInt64(checkpoint)
            state = try CheckpointState.decode(row["state"])
        }
        if revision > start {
            // The last change of each key and of the list in (start, revision]: at most one
            // checkpoint interval of rows.
            let rows = try Row.fetchAll(cachedStatement(sql: """
                SELECT subject, value, MAX(revision) AS revision FROM change
                 WHERE revision > ? AND revision <= ? AND kind = 'preference' AND environment = ? GROUP BY subject
                """), arguments: [Int64(start), Int64(revision), environment])
            for row in rows {
                let changed: Int64 = row["revision"]
                state.p[row["subject"]] = CheckpointState.Entry(v: row["value"], r: UInt64(changed))
            }
            if let row = try Row.fetchOne(cachedStatement(sql: """
                SELECT revision, value FROM change
                 WHERE revision > ? AND revision <= ? AND kind = 'things' AND environment = ? ORDER BY revision DESC LIMIT 1
                """), arguments: [Int64(start), Int64(revision), environment]) {
                let changed: Int64 = row["revision"]
                guard let list = ChangeRow(kind: "things", op: "replace", subject: nil, value: row["value"]).decoded,
                      case let .things(_, _, things) = list else {
                    throw StoreError.database("unreadable change-log entry at revision \(changed)")
                }
                state.t = things
                state.tr = UInt64(changed)
            }
        }
        return state.historical(at: revision)
    }

    /// A page of history records (see ``HistoryQuery``).
    func readHistory(_ query: HistoryQuery) throws -> [Change] {
        var conditions: [String] = []
        var arguments: [any DatabaseValueConvertible] = []
        var kinds: [String] = []
        if query.preferences {
            if let keys = query.keys {
                if !keys.isEmpty {
                    kinds.append("(kind = 'preference' AND subject IN (\(Array(repeating: "?", count: keys.count).joined(separator: ","))))")
                    arguments += keys
                }
            } else {
                kinds.append("kind = 'preference'")
            }
        }
        if query.things { kinds.append("kind = 'things'") }
        guard !kinds.isEmpty, query.limit > 0 else { return [] }
        conditions.append("(" + kinds.joined(separator: " OR ") + ")")
        switch query.environments {
        case nil:
            conditions.append("environment = ?")
            arguments.append(query.environment)
        case .every?:
            break
        case let .named(names)?:
            guard !names.isEmpty else { return [] }
            conditions.append("environment IN (\(Array(repeating: "?", count: names.count).joined(separator: ",")))")
            arguments += names
        }
        let order: String
        switch query.direction {
        case let .newestFirst(before):
            if let before {
                conditions.append("revision < ?")
                arguments.append(Int64(clamping: before))
            }
            order = "DESC"
        case let .oldestFirst(after):
            conditions.append("revision > ?")
            arguments.append(Int64(clamping: after))
            if let below = query.below {
                conditions.append("revision < ?")
                arguments.append(Int64(clamping: below))
            }
            order = "ASC"
        }
        arguments.append(query.limit)
        let filter = conditions.joined(separator: " AND ")
        // First only the candidates' sizes, to find where the byte bound ends the page; then the
        // records of that page alone (one read transaction, so both see the same rows).
        let sizes = try Row.fetchAll(self, sql: "SELECT revision, bytes FROM change WHERE \(filter) ORDER BY revision \(order) LIMIT ?",
                                     arguments: StatementArguments(arguments))
        let kept = query.kept(sizes.map { $0["bytes"] })
        guard kept > 0 else { return [] }
        arguments[arguments.count - 1] = kept
        let sql = "SELECT \(Self.changeColumns) FROM change WHERE \(filter) ORDER BY revision \(order) LIMIT ?"
        return try Row.fetchAll(self, sql: sql, arguments: StatementArguments(arguments)).map(Self.change)
    }
}
