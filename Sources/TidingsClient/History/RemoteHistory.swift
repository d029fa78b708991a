import Foundation

/// A value in a change record: a preference's value, a thing, a list of things, or null.
public enum HistoryValue: Sendable, Equatable, Codable {
    case null
    case boolean(Bool)
    case number(Double)
    case string(String)
    case list([String])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .boolean(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else { self = .list(try container.decode([String].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .boolean(value): try container.encode(value)
        case let .number(value):
            if value == value.rounded(), abs(value) < 1e15 { try container.encode(Int64(value)) } else { try container.encode(value) }
        case let .string(value): try container.encode(value)
        case let .list(value): try container.encode(value)
        }
    }
}

/// One change as the server remembers it (`GET /history`): revision, when (RFC 3339), who
/// (the credential's name), why (`Tidings-Reason`), and what it did.
public struct HistoryRecord: Sendable, Equatable, Codable {
    public let revision: UInt64
    public let at: String
    public let actor: String
    public let reason: String?
    /// `preferences` or `things`.
    public let topic: String
    /// The preference key (preferences).
    public let key: String?
    /// `add`, `remove` or `replace` (things).
    public let op: String?
    public let before: HistoryValue
    public let after: HistoryValue

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        revision = try container.decode(UInt64.self, forKey: .revision)
        at = try container.decode(String.self, forKey: .at)
        actor = try container.decode(String.self, forKey: .actor)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        topic = try container.decode(String.self, forKey: .topic)
        key = try container.decodeIfPresent(String.self, forKey: .key)
        op = try container.decodeIfPresent(String.self, forKey: .op)
        // A missing member and `null` are the same here.
        before = try container.decodeIfPresent(HistoryValue.self, forKey: .before) ?? .null
        after = try container.decodeIfPresent(HistoryValue.self, forKey: .after) ?? .null
    }
}

/// A page of records and the path of the next one (nil: no more).
public struct HistoryPage: Sendable, Equatable, Decodable {
    public let changes: [HistoryRecord]
    public let next: String?
}

/// What a rollback changed (no records: nothing differed).
public struct RollbackResult: Sendable, Equatable, Decodable {
    public let revision: UInt64
    public let changes: [HistoryRecord]
}

/// Which history to read.
public enum HistoryScope: Sendable, Equatable {
    case all
    case preference(String)
    case things
}

extension TidingsClient {
    /// A page of change records: newest first, or with `after` oldest first (both: a window).
    public func history(_ scope: HistoryScope = .all, before: UInt64? = nil, after: UInt64? = nil,
                        limit: Int? = nil) async throws(TidingsClientError) -> HistoryPage {
        var query: [(String, String)] = []
        if let before { query.append(("before", String(before))) }
        if let after { query.append(("after", String(after))) }
        if let limit { query.append(("limit", String(limit))) }
        let segments: [String]
        switch scope {
        case .all: segments = ["history"]
        case let .preference(key): segments = ["preferences", key, "history"]
        case .things: segments = ["things", "history"]
        }
        return try await transport.expectSuccess("GET", segments, query: query).decode(HistoryPage.self)
    }

    /// `POST /preferences/rollback`: every key (or `keys`) back to its value as of `revision`, as
    /// one write, recorded with `reason` (default: the server's `rollback to R`); `ifRevision`:
    /// only if the server is still at that global revision (else ``TidingsClientError/conflict(_:)``).
    public func rollbackPreferences(to revision: UInt64, keys: [String]? = nil, reason: String? = nil,
                                    ifRevision: UInt64? = nil) async throws(TidingsClientError) -> RollbackResult {
        struct Body: Encodable { let revision: UInt64; let keys: [String]? }
        return try await rollback(["preferences", "rollback"], body: try encodeJSON(Body(revision: revision, keys: keys)),
                                  reason: reason, ifRevision: ifRevision)
    }

    /// `POST /things/rollback`: the list back as it was at `revision`.
    public func rollbackThings(to revision: UInt64, reason: String? = nil,
                               ifRevision: UInt64? = nil) async throws(TidingsClientError) -> RollbackResult {
        try await rollback(["things", "rollback"], body: try encodeJSON(["revision": revision]), reason: reason, ifRevision: ifRevision)
    }

    private func rollback(_ segments: [String], body: Data, reason: String?, ifRevision: UInt64?) async throws(TidingsClientError) -> RollbackResult {
        var headers: [String: String] = [:]
        if let reason { headers["Tidings-Reason"] = reason }
        if let ifRevision { headers["If-Match"] = "\"\(ifRevision)\"" }
        return try await transport.expectSuccess("POST", segments, headers: headers, json: body).decode(RollbackResult.self)
    }
}
