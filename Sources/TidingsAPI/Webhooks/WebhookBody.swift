import Observing
import TidingsStore

/// A delivery's body: `{"type": "change", "data": <the history record, with "environment">}`,
/// the record exactly as `GET /history` and the audit stream show it (``HistoryRecord``).
enum WebhookBody {
    /// Until environments exist every change is made in this one.
    static let defaultEnvironment = "default"

    /// The body's bytes, nil for a change that has no record (the posts document).
    @MainActor
    static func bytes(_ change: Change, preferences: TidingsPreferences) -> [UInt8]? {
        guard let record = HistoryRecord.json(change, preferences: preferences) else { return nil }
        var data = record
        if !data.contains(#""environment":"#) {
            data.removeLast()   // the record's closing brace
            data += #","environment":"# + EventFrame.json(defaultEnvironment) + "}"
        }
        return Array((#"{"type":"change","data":"# + data + "}").utf8)
    }
}
