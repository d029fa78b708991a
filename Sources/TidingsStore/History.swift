import Foundation

/// What a page of history asks for (`GET /history` and its per-resource forms).
public struct HistoryQuery: Sendable, Hashable {
    /// Which environments' records a page holds, across environments.
    public enum EnvironmentSelection: Sendable, Hashable {
        /// Every environment's.
        case every
        /// These environments' (none: no record).
        case named([String])
    }

    /// Which way the page reads.
    public enum Direction: Sendable, Hashable {
        /// Newest first, only revisions below `before` (nil: from the newest).
        case newestFirst(before: UInt64?)
        /// Oldest first, only revisions above `after`.
        case oldestFirst(after: UInt64)
    }

    public var direction: Direction
    /// Records at most (the store answers up to this many).
    public var limit: Int
    /// Include preference changes.
    public var preferences: Bool
    /// Include changes of the thing list.
    public var things: Bool
    /// Only these preference keys (nil: every key). Changes of the posts document are never
    /// history records.
    public var keys: [String]?
    /// Reading oldest first: only revisions below this one too (a window `after < r < below`).
    public var below: UInt64?
    /// Only this environment's records.
    public var environment: String
    /// Records of several environments instead of ``environment``'s alone (nil: its alone): a
    /// webhook's reader follows every environment its hook covers, in one revision order.
    public var environments: EnvironmentSelection?
    /// Stop after the record that brings the page's summed ``Change/byteCount`` to this many
    /// bytes (nil: no bound). The store reads only each candidate's revision and size before
    /// it has decided where the page ends, so a page costs about this many bytes of memory and
    /// of reading whatever `limit` says. A page cut this way sums to at least `maxBytes`.
    public var maxBytes: Int?

    public init(direction: Direction, limit: Int, preferences: Bool = true, things: Bool = true, keys: [String]? = nil,
                below: UInt64? = nil, maxBytes: Int? = nil, environment: String = EnvironmentName.default,
                environments: EnvironmentSelection? = nil) {
        self.environment = environment
        self.direction = direction
        self.limit = limit
        self.preferences = preferences
        self.things = things
        self.keys = keys
        self.below = below
        self.maxBytes = maxBytes
        self.environments = environments
    }

    /// How many of `sizes` (the candidates' byte counts, in page order) the page keeps: each
    /// one whose predecessors sum to less than ``maxBytes``.
    func kept(_ sizes: [Int]) -> Int {
        guard let maxBytes else { return sizes.count }
        var total = 0
        for (index, size) in sizes.enumerated() {
            if total >= maxBytes { return index }
            total += size
        }
        return sizes.count
    }
}

/// A point in the history: a revision, or a time (the last revision committed at or before it).
public enum HistoryPoint: Sendable, Hashable {
    case revision(UInt64)
    /// Microseconds since 1970 (UTC).
    case time(Int64)
}

/// The preferences and the thing list as they stood at one revision.
public struct HistoricalState: Sendable, Hashable {
    /// The revision this state is as of.
    public var revision: UInt64
    /// Every preference set or reset at or before ``revision``, with the revision that did it.
    public var preferences: [String: StoredPreference]
    public var things: [String]
    /// The revision of the last change to the list at or before ``revision`` (0: never).
    public var thingsRevision: UInt64

    public init(revision: UInt64, preferences: [String: StoredPreference], things: [String], thingsRevision: UInt64) {
        self.revision = revision
        self.preferences = preferences
        self.things = things
        self.thingsRevision = thingsRevision
    }
}

/// The state at a revision as both stores keep it in a checkpoint or the history base, as one
/// line of JSON: `{"p": {key: {"v": JSON text or null, "r": revision}}, "t": [...], "tr": n,
/// "a": microseconds}` (`a`: when that revision was committed, 0 if unknown).
struct CheckpointState: Codable, Sendable, Hashable {
    struct Entry: Codable, Sendable, Hashable {
        var v: String?
        var r: UInt64
    }

    var p: [String: Entry] = [:]
    var t: [String] = []
    var tr: UInt64 = 0
    var a: Int64 = 0

    init() {}

    init(p: [String: Entry], t: [String], tr: UInt64, a: Int64) {
        self.p = p
        self.t = t
        self.tr = tr
        self.a = a
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        p = try container.decodeIfPresent([String: Entry].self, forKey: .p) ?? [:]
        t = try container.decodeIfPresent([String].self, forKey: .t) ?? []
        tr = try container.decodeIfPresent(UInt64.self, forKey: .tr) ?? 0
        a = try container.decodeIfPresent(Int64.self, forKey: .a) ?? 0
    }

    static func decode(_ text: String) throws -> CheckpointState {
        do {
            return try JSONDecoder().decode(CheckpointState.self, from: Data(text.utf8))
        } catch {
            throw StoreError.database("unreadable history checkpoint: \(error)")
        }
    }

    var json: String {
        let data = (try? JSONEncoder().encode(self)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Folds one change into the state (posts changes are not part of it).
    mutating func fold(_ kind: Change.Kind, revision: UInt64) {
        switch kind {
        case let .preference(key, json): p[key] = Entry(v: json, r: revision)
        case let .things(_, _, list):
            t = list
            tr = revision
        case .posts, .environment: break
        }
    }

    func historical(at revision: UInt64) -> HistoricalState {
        HistoricalState(revision: revision, preferences: p.mapValues { StoredPreference(json: $0.v, revision: $0.r) },
                        things: t, thingsRevision: tr)
    }
}

/// History reads every ``ChangeStore`` answers (`GET /history`, as-of reads, rollback).
public protocol HistoryStore: Sendable {
    /// A page of change records, in the query's order.
    func history(_ query: HistoryQuery) async throws -> [Change]

    /// The preferences and things of `environment` as of `point` (the revision is global).
    ///
    /// - Throws: ``StoreError/futureRevision(current:)`` for a revision newer than the current
    ///   one; ``StoreError/beyondHistory(oldestReadable:)`` for one older than retention keeps.
    func state(asOf point: HistoryPoint, environment: String) async throws -> HistoricalState
}

extension HistoryStore {
    /// The state of `default` as of `point`.
    public func state(asOf point: HistoryPoint) async throws -> HistoricalState {
        try await state(asOf: point, environment: EnvironmentName.default)
    }
}

/// How often both stores write a checkpoint of the whole state (in revisions), so that an
/// as-of read starts from one at most this far back instead of from the beginning.
enum HistoryCheckpoints {
    static let interval: UInt64 = 1_000

    /// Whether a batch that took the revision from `before` to `after` passed a checkpoint.
    static func crossed(from before: UInt64, to after: UInt64) -> Bool {
        after > before && after / interval > before / interval
    }
}
