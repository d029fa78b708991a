import Observing
import TidingsStore

/// A change record as `GET /history` and the audit stream show it (API.md "History"):
/// `{"revision", "at", "actor", "reason"?, "topic", "key"?, "op"?, "before", "after"}`.
/// Preferences' `before`/`after` are the key's values (the default when reset); things' are
/// the thing added (`after`) or removed (`before`), or the lists around a replacement.
/// Changes of the posts document are not records (nil).
enum HistoryRecord {
    /// The record's JSON text (one line), or nil for a posts change.
    @MainActor
    static func json(_ change: Change, preferences: TidingsPreferences) -> String? {
        var record = JSONObjectWriter()
        record.integer("revision", change.revision)
        record.string("at", RFC3339.string(microseconds: change.at))
        // Rows written before the history existed carry no actor.
        let known = !change.actor.isEmpty
        record.string("actor", known ? change.actor : "unknown")
        if let reason = change.reason { record.string("reason", reason) }
        record.string("environment", change.environment)
        switch change.kind {
        case let .preference(key, json):
            let defaultJSON = preferences.declaration(forKey: key).map { EventFrame.json($0.defaultValue) } ?? "null"
            record.string("topic", "preferences")
            record.string("key", key)
            record.raw("before", known ? (change.before ?? defaultJSON) : "null")
            record.raw("after", json ?? defaultJSON)
        case let .things(op, thing, list):
            record.string("topic", "things")
            record.string("op", op.rawValue)
            switch op {
            case .add:
                record.raw("before", "null")
                record.raw("after", EventFrame.json(thing ?? ""))
            case .remove:
                record.raw("before", EventFrame.json(thing ?? ""))
                record.raw("after", "null")
            case .replace:
                record.raw("before", known ? (change.before ?? "[]") : "null")
                record.raw("after", EventFrame.json(list))
            }
        case .posts, .environment:
            return nil
        }
        return record.json
    }
}
