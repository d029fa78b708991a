import Foundation
import EventHTTP
import TidingsStore

/// The query of the history reads (`before`, `after`, `limit`, `topics`, `keys`), checked:
/// anything malformed is a 400 problem, an unknown key a 422, like the streams' parameters.
struct HistoryPageRequest: Equatable {
    /// Records per page unless `limit` says otherwise, and the most it may say.
    static let defaultLimit = 100
    static let maxLimit = 1_000
    /// A page's records stop once they pass this many bytes (at least one is always sent).
    static let maxPageBytes = 1 << 20

    var direction: HistoryQuery.Direction = .newestFirst(before: nil)
    /// With both `after` and `before`: the window's upper end (read oldest first).
    var below: UInt64?
    var limit = defaultLimit
    var preferences = true
    var things = true
    /// nil: every key.
    var keys: [String]?
    /// Whether `topics`/`keys` were given (repeated in the next page's URL).
    var topicsText: String?
    var keysText: String?

    /// Parses `request`'s query for the resource at `path`; `scope` fixes what the resource
    /// covers (one key, the things), in which case `topics` and `keys` are not taken.
    static func parse(_ request: Request, declared: [String], scope: Scope) throws(ProblemDetails) -> HistoryPageRequest {
        var page = HistoryPageRequest()
        let before = try revision(request.query("before"), name: "before")
        let after = try revision(request.query("after"), name: "after")
        switch (before, after) {
        case (nil, nil): break
        case let (before?, nil): page.direction = .newestFirst(before: before)
        case let (nil, after?): page.direction = .oldestFirst(after: after)
        case let (before?, after?):
            // A window: after < revision < before, read oldest first.
            page.direction = .oldestFirst(after: after)
            page.below = before
        }
        if let raw = request.query("limit") {
            guard (1...4).contains(raw.utf8.count), let limit = Int(raw), (1...maxLimit).contains(limit) else {
                throw Problems.badQuery("'limit' must be a whole number from 1 to \(maxLimit).")
            }
            page.limit = limit
        }
        switch scope {
        case .all:
            if let raw = request.query("topics") {
                let topics = Set(list(raw))
                let unknown = topics.subtracting(["preferences", "things"]).sorted()
                guard unknown.isEmpty, !topics.isEmpty else {
                    throw Problems.badQuery(topics.isEmpty
                        ? "'topics' is empty; name preferences, things or both."
                        : "Unknown topic '\(unknown[0])'; the history's topics are preferences and things.")
                }
                page.preferences = topics.contains("preferences")
                page.things = topics.contains("things")
                page.topicsText = ["preferences", "things"].filter(topics.contains).joined(separator: ",")
            }
            if let raw = request.query("keys") {
                let wanted = Set(list(raw))
                guard !wanted.isEmpty else { throw Problems.badQuery("'keys' is empty; leave it out to cover every preference.") }
                if let unknown = wanted.subtracting(declared).sorted().first {
                    throw Problems.invalid("There is no preference '\(unknown)'.", errors: [.init(key: unknown, detail: "unknown preference")])
                }
                page.keys = declared.filter(wanted.contains)
                page.keysText = page.keys!.joined(separator: ",")
            }
        case let .preference(key):
            page.things = false
            page.keys = [key]
        case .things:
            page.preferences = false
        }
        return page
    }

    enum Scope: Equatable {
        case all
        case preference(String)
        case things
    }

    var storeQuery: HistoryQuery {
        HistoryQuery(direction: direction, limit: limit + 1, preferences: preferences, things: things, keys: keys, below: below,
                     maxBytes: Self.maxPageBytes)
    }

    /// The URL of the page after the one that ended at `revision`.
    func next(path: String, after revision: UInt64) -> String {
        var items: [String] = []
        switch direction {
        case .newestFirst: items.append("before=\(revision)")
        case .oldestFirst: items.append("after=\(revision)")
        }
        if let below { items.append("before=\(below)") }
        if limit != Self.defaultLimit { items.append("limit=\(limit)") }
        if let topicsText { items.append("topics=\(topicsText)") }
        if let keysText { items.append("keys=\(keysText)") }
        return path + "?" + items.joined(separator: "&")
    }

    private static func revision(_ raw: String?, name: String) throws(ProblemDetails) -> UInt64? {
        guard let raw else { return nil }
        // Revisions are signed 64-bit in the stores (the contract's maximum).
        guard (1...19).contains(raw.utf8.count), raw.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let value = UInt64(raw),
              value <= UInt64(Int64.max) else {
            throw Problems.badQuery("'\(name)' must be a revision: a whole number from 0 to 9223372036854775807.")
        }
        return value
    }

    private static func list(_ raw: String) -> [String] {
        raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
