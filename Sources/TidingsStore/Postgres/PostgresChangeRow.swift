import Foundation

/// A change row as PostgreSQL stores it (`change` table, or a commit's result), turned into a
/// ``Change``. Rows come from outside the process: anything unexpected is a
/// ``StoreError/database(_:)``, never a trap.
struct PostgresChangeRow: Sendable, Hashable {
    var revision: Int64
    var kind: String
    var op: String
    var subject: String?
    var value: String?
    var at: Int64 = 0
    var actor: String = ""
    var reason: String?
    var before: String?
    var environment: String = EnvironmentName.default

    func change() throws -> Change {
        guard revision > 0 else { throw StoreError.database("change row with revision \(revision)") }
        let kind: Change.Kind
        switch (self.kind, op, subject, value) {
        case let ("preference", "set", key?, json?):
            kind = .preference(key: key, json: json)
        case let ("preference", "reset", key?, nil):
            kind = .preference(key: key, json: nil)
        case let ("things", opName, thing, list?):
            guard let thingsOp = Change.ThingsOp(rawValue: opName),
                  (thingsOp == .replace) == (thing == nil),
                  let things = try? JSONDecoder().decode([String].self, from: Data(list.utf8)) else {
                throw unreadable
            }
            kind = .things(op: thingsOp, thing: thing, list: things)
        case let ("posts", "set", nil, document?):
            kind = .posts(document)
        case let ("environment", opName, copiedFrom, nil):
            guard let environmentOp = Change.EnvironmentOp(rawValue: opName) else { throw unreadable }
            kind = .environment(environmentOp, copiedFrom: copiedFrom)
        default:
            throw unreadable
        }
        return Change(revision: UInt64(revision), kind: kind, at: at, actor: actor, reason: reason, before: before,
                      environment: environment)
    }

    private var unreadable: StoreError {
        .database("unreadable change row at revision \(revision) (kind \(kind), op \(op))")
    }
}

/// A commit's answer for one write, decoded from `tidings_commit_v1`'s JSON result.
enum PostgresWriteOutcome: Decodable, Sendable {
    case changes([PostgresChangeRow])
    case failed(sqlState: String, message: String, detail: String?)

    private enum Keys: String, CodingKey { case c, s, m, d }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        if let rows = try container.decodeIfPresent([Tuple].self, forKey: .c) {
            self = .changes(rows.map(\.row))
        } else {
            self = .failed(
                sqlState: try container.decode(String.self, forKey: .s),
                message: try container.decodeIfPresent(String.self, forKey: .m) ?? "",
                detail: try container.decodeIfPresent(String.self, forKey: .d))
        }
    }

    /// `[revision, kind, op, subject, value, before, at, environment]`.
    private struct Tuple: Decodable {
        var row: PostgresChangeRow
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            row = PostgresChangeRow(
                revision: try container.decode(Int64.self),
                kind: try container.decode(String.self),
                op: try container.decode(String.self),
                subject: try container.decodeIfPresent(String.self),
                value: try container.decodeIfPresent(String.self),
                at: 0, actor: "", reason: nil,
                before: container.isAtEnd ? nil : try container.decodeIfPresent(String.self))
            if !container.isAtEnd { row.at = try container.decode(Int64.self) }
            if !container.isAtEnd { row.environment = try container.decode(String.self) }
        }
    }
}
