import Observing
import OpenCombine
import TidingsStore

/// Everything the server holds in memory: the observable objects (the cache that every read is
/// served from), the revision bookkeeping, and the replay journal.
///
/// Confined to the main actor, which in the server *is* the libevent loop: handlers, stream
/// subscribers and the write pipeline's apply step all run there, so none of this needs a lock.
@MainActor
final class TidingsState {
    let preferences: Preferences
    let things: ThingStore
    let textCase: TextCase
    let journal: EventJournal

    /// The global revision the in-memory state reflects (`Tidings-Revision`).
    private(set) var revision: UInt64
    /// The revision that last changed each preference (absent: never set, revision 0).
    private(set) var preferenceRevisions: [String: UInt64]
    /// The revision that last changed the thing list.
    private(set) var thingsRevision: UInt64
    /// The newest event of each topic, so a subscriber woken by a per-key subject finds the
    /// frame already encoded instead of encoding it once per subscriber.
    private(set) var latestEntries: [EventTopic: JournalEntry] = [:]
    /// The posts feed's state as `GET /posts` answers it (one line of JSON); set by the feed.
    var postsSnapshotJSON: () -> String = { #"{"state":"idle","posts":[],"fetchedAt":null,"error":null,"source":null}"# }
    /// Posts events, sent by the feed right after it recorded them.
    let postsEvents = PassthroughSubject<JournalEntry, Never>()

    init(preferences: Preferences, snapshot: StoreSnapshot, textCase: TextCase, replayCapacity: Int) {
        self.preferences = preferences
        var environment = EnvironmentValues()
        environment.textCase = textCase
        self.things = ThingStore(snapshot.things, environment: environment)
        self.textCase = textCase
        self.revision = snapshot.revision
        self.thingsRevision = snapshot.thingsRevision
        self.preferenceRevisions = snapshot.preferences
            .filter { preferences.declaration(forKey: $0.key) != nil }
            .mapValues(\.revision)
        self.journal = EventJournal(capacity: replayCapacity, floor: snapshot.revision)
    }

    func revision(ofPreference key: String) -> UInt64 { preferenceRevisions[key] ?? 0 }

    /// Moves the current revision forward without an event (a change that altered nothing here,
    /// e.g. another instance's posts announcement).
    func advance(to newRevision: UInt64) {
        if newRevision > revision { revision = newRevision }
    }

    /// Records a preference change as its `preference` event (see ``record(_:)``).
    func recordPreference(_ key: String, value: PreferenceValue, revision: UInt64) {
        let data = PreferenceEventData(key: key, value: value, revision: revision)
        record(JournalEntry(revision: revision, topic: .preference(key),
                            frame: EventFrame.frame(id: revision, event: "preference", data: data)))
    }

    /// Records a thing-list change (the list after it) as its `things` event (see ``record(_:)``).
    func recordThings(_ list: [String], revision: UInt64, op: String, thing: String?) {
        let data = ThingsEventData(things: list, revision: revision, change: .init(op: op, thing: thing))
        record(JournalEntry(revision: revision, topic: .things,
                            frame: EventFrame.frame(id: revision, event: "things", data: data)))
    }

    /// Records an announced change: it becomes the current revision, enters the replay journal
    /// and is what the topic's subscribers will send. Call before announcing on the subject.
    func record(_ entry: JournalEntry) {
        precondition(entry.revision > revision, "revisions must increase")
        revision = entry.revision
        journal.append(entry)
        latestEntries[entry.topic] = entry
        switch entry.topic {
        case let .preference(key): preferenceRevisions[key] = entry.revision
        case .things: thingsRevision = entry.revision
        case .posts: break
        }
    }
}
