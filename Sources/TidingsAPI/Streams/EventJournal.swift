import Observing

/// What an event is about; a stream covers a set of these.
enum EventTopic: Hashable, Sendable {
    case preference(String)
    case things
    case posts
}

/// One announced change, encoded once and shared by every stream and by resumes.
struct JournalEntry: Sendable {
    let revision: UInt64
    let topic: EventTopic
    /// The complete SSE frame (`id:`, `event:`, `data:`, blank line).
    let frame: [UInt8]
    /// For a `preference` event: the value it announces, typed by its declaration.
    var preferenceValue: PreferenceValue? = nil
}

/// The replay history behind `Last-Event-ID`: the most recent events in revision order,
/// bounded by count (`--replay-buffer`) and by bytes (`--replay-bytes`), oldest evicted first.
/// Filled at start-up from the store's change table, then by every applied change, so it is
/// the same on every instance sharing the store.
///
/// Confined to the main actor (the event loop). `floor` is the revision just before the oldest
/// event it can replay: a resume from below it cannot be answered without a gap.
@MainActor
final class EventJournal {
    private var entries: [JournalEntry] = []
    private var head = 0
    private(set) var byteCount = 0
    private(set) var floor: UInt64
    let capacity: Int
    let maxBytes: Int

    init(capacity: Int, maxBytes: Int, floor: UInt64) {
        self.capacity = max(capacity, 0)
        self.maxBytes = max(maxBytes, 0)
        self.floor = floor
    }

    var count: Int { entries.count - head }

    /// Starts the history from `history` (oldest first), which ends at `current`.
    func seed(_ history: [JournalEntry], floor newFloor: UInt64) {
        reset(floor: newFloor)
        for entry in history { append(entry) }
    }

    /// Forgets everything: resumes from before `floor` get a reset.
    func reset(floor newFloor: UInt64) {
        entries = []
        head = 0
        byteCount = 0
        floor = newFloor
    }

    func append(_ entry: JournalEntry) {
        entries.append(entry)
        byteCount += entry.frame.count
        while count > 0 && (count > capacity || byteCount > maxBytes) {
            let evicted = entries[head]
            floor = evicted.revision
            byteCount -= evicted.frame.count
            // Let go of its bytes now; the slot itself goes at the next compaction.
            entries[head] = JournalEntry(revision: evicted.revision, topic: evicted.topic, frame: [])
            head += 1
        }
        if head > 1024 && head * 2 > entries.count {
            entries.removeFirst(head)
            head = 0
        }
        if count == 0 { floor = max(floor, entry.revision) }
    }

    /// The retained entries after `revision` that `covers` accepts, oldest first; `nil` when the
    /// history cannot answer without a gap (the id is older than what is retained, or newer
    /// than `current`), in which case the stream must `reset` and send a snapshot.
    func entries(after revision: UInt64, current: UInt64, where covers: (EventTopic) -> Bool) -> [JournalEntry]? {
        guard revision >= floor, revision <= current else { return nil }
        // Entries are in revision order: binary search for the first one after `revision`.
        var low = head, high = entries.count
        while low < high {
            let mid = (low + high) / 2
            if entries[mid].revision <= revision { low = mid + 1 } else { high = mid }
        }
        return entries[low...].filter { covers($0.topic) }
    }
}
