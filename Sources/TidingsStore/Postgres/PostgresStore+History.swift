import Foundation
internal import PostgresNIO

/// History reads on PostgreSQL: pages of the change table and as-of reads
/// (`tidings_as_of_v1`, one snapshot).
extension PostgresStore {
    public func history(_ query: HistoryQuery) async throws -> [Change] {
        guard query.limit > 0, query.preferences || query.things else { return [] }
        // One environment's records, or several environments' (a webhook's reader).
        let everyEnvironment = query.environments == .every
        let environments: [String]
        switch query.environments {
        case nil, .every?: environments = [query.environment]
        case let .named(names)?: environments = names
        }
        let prefs = query.preferences
        let anyKey = query.keys == nil
        let keys = query.keys ?? []
        let things = query.things
        let limit = Int64(query.limit)
        // Where the byte bound ends the page is decided on the candidates' sizes alone (the
        // `page` CTE reads no values); only the records kept are read whole.
        let maxBytes = Int64(clamping: query.maxBytes ?? Int.max)
        let rows = try await withConnection(reader) { [logger] connection in
            switch query.direction {
            case let .newestFirst(before):
                let below = Int64(clamping: before ?? UInt64(Int64.max))
                return try await connection.query("""
                    WITH page AS (
                        SELECT c.revision, c.bytes FROM change c
                         WHERE ((\(prefs) AND c.kind = 'preference' AND (\(anyKey) OR c.subject = ANY(\(keys))))
                                OR (\(things) AND c.kind = 'things'))
                           AND (\(everyEnvironment) OR c.environment = ANY(\(environments))) AND c.revision < \(below)
                         ORDER BY c.revision DESC LIMIT \(limit)),
                    kept AS (
                        SELECT p.revision FROM (SELECT revision, SUM(bytes) OVER (ORDER BY revision DESC) - bytes AS preceding FROM page) p
                         WHERE p.preceding < \(maxBytes))
                    SELECT c.revision, c.kind, c.op, c.subject, c.value, c.at, c.actor, c.reason, c.before, c.environment
                      FROM change c JOIN kept k ON k.revision = c.revision
                     ORDER BY c.revision DESC
                    """, logger: logger).collect()
            case let .oldestFirst(after):
                let above = Int64(clamping: after)
                let below = Int64(clamping: query.below ?? UInt64(Int64.max))
                return try await connection.query("""
                    WITH page AS (
                        SELECT c.revision, c.bytes FROM change c
                         WHERE ((\(prefs) AND c.kind = 'preference' AND (\(anyKey) OR c.subject = ANY(\(keys))))
                                OR (\(things) AND c.kind = 'things'))
                           AND c.revision > \(above) AND (\(everyEnvironment) OR c.environment = ANY(\(environments))) AND c.revision < \(below)
                         ORDER BY c.revision ASC LIMIT \(limit)),
                    kept AS (
                        SELECT p.revision FROM (SELECT revision, SUM(bytes) OVER (ORDER BY revision ASC) - bytes AS preceding FROM page) p
                         WHERE p.preceding < \(maxBytes))
                    SELECT c.revision, c.kind, c.op, c.subject, c.value, c.at, c.actor, c.reason, c.before, c.environment
                      FROM change c JOIN kept k ON k.revision = c.revision
                     ORDER BY c.revision ASC
                    """, logger: logger).collect()
            }
        }
        return try rows.map(PostgresHistoryRows.change)
    }

    public func state(asOf point: HistoryPoint, environment: String) async throws -> HistoricalState {
        let want: Int64
        let time: Int64?
        switch point {
        case let .revision(revision):
            // Beyond bigint: newer than any revision can be.
            guard revision <= UInt64(Int64.max) else {
                let current = try await currentRevision()
                throw StoreError.futureRevision(current: current)
            }
            want = Int64(revision)
            time = nil
        case let .time(at):
            want = 0
            time = at
        }
        let answer = try await withConnection(reader) { [logger] connection -> String in
            let rows = try await connection.query("SELECT tidings_as_of_v2(\(want), \(time), \(environment))::text", logger: logger)
            var answer: String?
            for try await row in rows { answer = try row.decode(String?.self) }
            guard let answer else { throw StoreError.database("the as-of function returned nothing") }
            return answer
        }
        return try PostgresHistoryRows.state(answer)
    }

    /// The global revision (for an answer that needs only it).
    private func currentRevision() async throws -> UInt64 {
        let rows = try await withConnection(reader) { [logger] connection in
            try await connection.query("SELECT m.revision FROM meta m WHERE m.id = 1", logger: logger).collect()
        }
        guard let row = rows.first else { throw StoreError.database("the meta row is missing") }
        return try PostgresSnapshotRows.unsigned(try row.decode(Int64.self))
    }
}

/// Decoding of history rows and as-of answers; anything unexpected is a ``StoreError/database(_:)``.
enum PostgresHistoryRows {
    /// Columns `revision, kind, op, subject, value, at, actor, reason, before, environment`.
    static func change(_ row: PostgresRow) throws -> Change {
        let (revision, kind, op, subject, value, at, actor, reason, before, environment) =
            try row.decode((Int64, String, String, String?, String?, Int64, String, String?, String?, String).self)
        return try PostgresChangeRow(revision: revision, kind: kind, op: op, subject: subject, value: value,
                                     at: at, actor: actor, reason: reason, before: before, environment: environment).change()
    }

    private struct Answer: Decodable {
        var r: Int64?
        var state: CheckpointState?
        var s: String?
        var d: Int64?
    }

    static func state(_ text: String) throws -> HistoricalState {
        let answer: Answer
        do {
            answer = try JSONDecoder().decode(Answer.self, from: Data(text.utf8))
        } catch {
            throw StoreError.database("unreadable as-of answer: \(error)")
        }
        switch (answer.s, answer.d, answer.r, answer.state) {
        case let ("future"?, current?, _, _):
            throw StoreError.futureRevision(current: try PostgresSnapshotRows.unsigned(current))
        case let ("gone"?, floor?, _, _):
            throw StoreError.beyondHistory(oldestReadable: try PostgresSnapshotRows.unsigned(floor))
        case let (nil, _, revision?, state?):
            return state.historical(at: try PostgresSnapshotRows.unsigned(revision))
        default:
            throw StoreError.database("unexpected as-of answer")
        }
    }
}
