import Observing
import TidingsStore

/// A delivery's body: `{"type": "change", "data": <the history record, with "environment">}`,
/// the record exactly as `GET /history` and the audit stream show it (``HistoryRecord``, which
/// names the environment the change was made in).
enum WebhookBody {
    /// The body's bytes, nil for a change that has no record (the posts document).
    @MainActor
    static func bytes(_ change: Change, preferences: TidingsPreferences) -> [UInt8]? {
        guard let record = HistoryRecord.json(change, preferences: preferences) else { return nil }
        return Array((#"{"type":"change","data":"# + record + "}").utf8)
    }
}
