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
}

/// The replay ring behind `Last-Event-ID`: the most recent events in revision order.
///
/// Confined to the main actor (the event loop). Every revision announces exactly one event, so
/// the ring holds a contiguous run of revisions; `floor` is the revision just before the oldest
/// one it can replay (at start-up: the revision loaded from the store).
@MainActor
final class EventJournal {
    private var ring: [JournalEntry?]
    private var start = 0
    private(set) var count = 0
    private(set) var floor: UInt64

    init(capacity: Int, floor: UInt64) {
        ring = Array(repeating: nil, count: max(capacity, 0))
        self.floor = floor
    }

    var capacity: Int { ring.count }

    func append(_ entry: JournalEntry) {
        guard !ring.isEmpty else { floor = entry.revision; return }
        if count == ring.count {
            floor = ring[start]!.revision
            ring[start] = entry
            start = (start + 1) % ring.count
        } else {
            ring[(start + count) % ring.count] = entry
            count += 1
        }
    }

    /// The retained entries after `revision` that `covers` accepts, oldest first; `nil` when the
    /// ring cannot answer without a gap (the id is older than what is retained, or newer than
    /// `current`), in which case the stream must `reset` and send a snapshot.
    func entries(after revision: UInt64, current: UInt64, where covers: (EventTopic) -> Bool) -> [JournalEntry]? {
        guard revision >= floor, revision <= current else { return nil }
        var result: [JournalEntry] = []
        // Entries are in revision order: binary search for the first one after `revision`.
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if entry(at: mid).revision <= revision { low = mid + 1 } else { high = mid }
        }
        for index in low..<count {
            let candidate = entry(at: index)
            if covers(candidate.topic) { result.append(candidate) }
        }
        return result
    }

    private func entry(at index: Int) -> JournalEntry { ring[(start + index) % ring.count]! }
}
