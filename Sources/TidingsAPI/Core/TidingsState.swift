import EventHTTP
import Foundation
import Logging
import Observing
import OpenCombine
import TidingsModel
import TidingsStore

/// The server's preference container: each change it announces carries its event, encoded once.
typealias TidingsPreferences = Preferences<JournalEntry>
/// The server's thing list: each change it announces carries its event, encoded once.
typealias TidingsThings = ThingStore<JournalEntry>
/// A committed change with its preference value typed and checked once — by the write that made
/// it (``WritePipeline``), or where another writer's change came in (``TidingsState/committed(_:)``).
/// The value is nil for a change of the thing list or the posts, and for a key this instance
/// does not declare.
typealias CommittedChange = TypedChange<PreferenceValue?>

/// Everything the server holds in memory: the observable objects (the cache every read is
/// served from), the revision bookkeeping, and the replay journal — and ``apply(_:)``, the one
/// function through which every committed change, this instance's or another's, reaches them.
///
/// Confined to the main actor, which in the server *is* the libevent loop, so none of this
/// needs a lock.
@MainActor
final class TidingsState {
    let preferences: TidingsPreferences
    let things: TidingsThings
    let textCase: TextCase
    let journal: EventJournal
    private let logger: Logger

    /// The global revision the in-memory state reflects (`Tidings-Revision`): the last change
    /// applied. Changes are applied strictly in order, so every revision up to it is applied.
    private(set) var revision: UInt64
    /// The revision that last changed each preference (absent: never set, revision 0).
    private(set) var preferenceRevisions: [String: UInt64]
    /// The latest of ``preferenceRevisions`` (0 when none was set): the ETag of `GET /preferences`
    /// and of OFREP's bulk evaluation, kept as changes apply rather than searched for per request.
    private(set) var latestPreferenceRevision: UInt64 = 0
    /// OFREP's evaluation answers, built once per revision (OpenFeature/OFREPAnswers): kept
    /// with the state they show.
    let ofrepAnswers = OFREPAnswers()
    /// The revision that last changed the thing list.
    private(set) var thingsRevision: UInt64
    /// The stored posts document (what `posts` events carry) and its revision.
    private(set) var posts: StoredPosts?
    /// The posts feed's URL (set by the posts feed): a stored document fetched from another
    /// source is not this feed's (`TidingsState+Posts.swift`).
    var postsSource: FeedSource?
    /// `posts` events, in revision order (the feed's own subject: posts are one document).
    let postsEvents = PassthroughSubject<JournalEntry, Never>()
    /// Every applied change of a preference or the thing list, for the audit stream (History/).
    let historyChanges = PassthroughSubject<Change, Never>()
    /// Sent after memory was rebuilt from a snapshot (the history no longer reached back to
    /// this instance's position): streams must `reset` and send a fresh snapshot.
    let reloads = PassthroughSubject<Void, Never>()

    init(preferences: TidingsPreferences, snapshot: StoreSnapshot, textCase: TextCase,
         journal: EventJournal, logger: Logger) {
        self.preferences = preferences
        var environment = EnvironmentValues()
        environment.textCase = textCase
        self.things = TidingsThings(snapshot.things, environment: environment)
        self.textCase = textCase
        self.journal = journal
        self.logger = logger
        self.revision = snapshot.revision
        self.thingsRevision = snapshot.thingsRevision
        self.posts = snapshot.posts
        self.preferenceRevisions = snapshot.preferences
            .filter { preferences.declaration(forKey: $0.key) != nil }
            .mapValues(\.revision)
        preferences.seedRevisions(preferenceRevisions)
        latestPreferenceRevision = preferenceRevisions.values.max() ?? 0
    }

    func revision(ofPreference key: String) -> UInt64 { preferenceRevisions[key] ?? 0 }

    // MARK: The one change path

    /// Applies the next committed change: memory, the journal, then the change's subject, which
    /// carries the event encoded once. Returns false (applying nothing) unless `change` is
    /// exactly the next revision; the caller (``ChangeFeed``) keeps the order. The change's
    /// value is already typed and checked: nothing is decoded or checked here.
    @discardableResult
    func apply(_ committed: CommittedChange) -> Bool {
        let change = committed.change
        guard change.revision == revision + 1 else { return false }
        revision = change.revision
        let entry = Self.entry(for: committed)
        if let entry { journal.append(entry) }
        if case .posts = change.kind {} else { historyChanges.send(change) }
        switch change.kind {
        case let .preference(key, _):
            // A key this instance does not declare (another schema): the revision only.
            guard let entry, let value = committed.meaning else { return true }
            preferenceRevisions[key] = change.revision
            latestPreferenceRevision = change.revision
            preferences.receive(PreferenceChange(key: key, value: value, revision: change.revision, payload: entry))
        case let .things(op, thing, list):
            thingsRevision = change.revision
            things.apply(Self.edit(op: op, thing: thing, list: list, current: things.things),
                         revision: change.revision, payload: entry)
        case let .posts(document):
            posts = StoredPosts(document: document, revision: change.revision)
            if let entry { postsEvents.send(entry) }
        }
        return true
    }

    /// The edit that takes `current` to `list`: the change's own op when memory agrees with
    /// the store, else a replacement (the store's list is the truth; memory is repaired).
    private static func edit(op: Change.ThingsOp, thing: String?, list: [String], current: [String]) -> ThingEdit {
        switch (op, thing) {
        case let (.add, thing?) where current + [thing] == list: return .add(thing)
        case let (.remove, thing?) where current.filter({ $0 != thing }) == list && current.contains(thing): return .remove(thing)
        default: return .replaceAll(list)
        }
    }

    /// Rebuilds memory from `snapshot` when the history no longer reaches back to this
    /// instance's position (it fell too far behind, or the database was replaced). Streams are
    /// told through ``reloads`` and start over with a snapshot.
    func reload(_ snapshot: StoreSnapshot) {
        logger.warning("rebuilding memory from the store", metadata: [
            "from": "\(revision)", "to": "\(snapshot.revision)",
        ])
        // The snapshot's revision even when lower: the database may have gone back (a restore),
        // and memory must follow it so its next changes apply.
        revision = snapshot.revision
        journal.reset(floor: revision)
        for declaration in preferences.declarations {
            let record = snapshot.preferences[declaration.key]
            let value = record?.json.flatMap { Self.preferenceValue(json: $0, declaration: declaration) } ?? declaration.defaultValue
            let recordRevision = record?.revision ?? 0
            preferenceRevisions[declaration.key] = recordRevision
            // Announced only where the value or its revision differs from memory's.
            preferences.receive(PreferenceChange(key: declaration.key, value: value, revision: recordRevision))
        }
        latestPreferenceRevision = preferenceRevisions.values.max() ?? 0
        ofrepAnswers.invalidate()
        thingsRevision = snapshot.thingsRevision
        if things.things != snapshot.things {
            things.apply(.replaceAll(snapshot.things), revision: snapshot.thingsRevision, payload: nil)
        }
        posts = snapshot.posts
        reloads.send()
    }

    // MARK: Where other writers' changes come in

    /// `change`, made by another writer (another instance, a rollback's history, the replay
    /// history at start-up), typed: a preference's stored JSON is outside input, so it is
    /// decoded and checked against the key's declaration here, once. A value that no longer
    /// fits reads as the default, as at start-up.
    func committed(_ change: Change) -> CommittedChange {
        Self.committed(change, preferences: preferences)
    }

    /// ``committed(_:)`` before there is a state (the replay history at start-up).
    static func committed(_ change: Change, preferences: TidingsPreferences) -> CommittedChange {
        guard case let .preference(key, json) = change.kind,
              let declaration = preferences.declaration(forKey: key) else { return CommittedChange(change, meaning: nil) }
        let value = json.flatMap { preferenceValue(json: $0, declaration: declaration) } ?? declaration.defaultValue
        return CommittedChange(change, meaning: value)
    }

    // MARK: Events, encoded once

    /// The event announcing `committed` (nil for a key this instance does not declare). The same
    /// change gives the same bytes on every instance: the history replays what live streams saw.
    static func entry(for committed: CommittedChange) -> JournalEntry? {
        let change = committed.change
        let revision = change.revision
        switch change.kind {
        case let .preference(key, _):
            guard let value = committed.meaning else { return nil }
            let data = PreferenceEventData(key: key, value: value, revision: revision)
            return JournalEntry(revision: revision, topic: .preference(key),
                                frame: EventFrame.frame(id: revision, event: "preference", data: data),
                                preferenceValue: value)
        case let .things(op, thing, list):
            let data = ThingsEventData(things: list, revision: revision, change: .init(op: op.rawValue, thing: thing))
            return JournalEntry(revision: revision, topic: .things,
                                frame: EventFrame.frame(id: revision, event: "things", data: data))
        case let .posts(document):
            return JournalEntry(revision: revision, topic: .posts,
                                frame: EventFrame.frame(id: revision, event: "posts", json: document))
        }
    }

    /// A stored value as its declaration types it; nil when it no longer fits (then the
    /// default applies, as at start-up).
    static func preferenceValue(json: String, declaration: PreferenceDeclaration) -> PreferenceValue? {
        guard let raw = try? JSONCoding.decoder.decode(PreferenceValue.self, from: Data(json.utf8)) else { return nil }
        return try? declaration.check(raw).get()
    }
}

extension TidingsPreferences {
    /// The built-in set (API.md), declared once by TidingsModel's `BuiltInPreferences`, as the
    /// server's container over `store`.
    static func builtIn(store: any KeyValueStore = InMemoryKeyValueStore()) -> TidingsPreferences {
        do {
            return try TidingsPreferences(declarations: PreferenceDeclaration.declarations(of: BuiltInPreferences()), store: store)
        } catch {
            preconditionFailure("the built-in preference declarations are invalid: \(error)")
        }
    }
}
