import Observing
import TidingsStore

/// The audit stream's event for a change: `id:` its revision, `event: change`, `data:` its
/// record (HistoryRecord); nil for a posts change.
enum HistoryFrame {
    @MainActor
    static func frame(_ change: Change, preferences: TidingsPreferences) -> [UInt8]? {
        HistoryRecord.json(change, preferences: preferences).map {
            EventFrame.frame(id: change.revision, event: "change", json: $0)
        }
    }
}
