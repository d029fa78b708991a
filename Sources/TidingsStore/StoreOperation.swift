/// One change the store can apply. Each operation takes the next global revision.
///
/// The API validates operations on its loop against its in-memory copy before it commits them;
/// the store checks them again (unique things, things that exist, valid JSON) so that a bad
/// operation fails its own commit and can never corrupt the file.
public enum StoreOperation: Sendable, Hashable {
    /// Sets preference `key` to `json`, one JSON value as UTF-8 text (e.g. `true`, `"fat"`, `5`).
    case setPreference(key: String, json: String)
    /// Resets preference `key` to its default. The store keeps the key's revision (a row with no
    /// value) so its `ETag` stays the same across a restart.
    case resetPreference(key: String)
    /// Appends `thing` to the end of the list. Fails with ``StoreError/duplicateThing(_:)`` if present.
    case addThing(String)
    /// Removes `thing` from the list. Fails with ``StoreError/thingNotFound(_:)`` if absent.
    case removeThing(String)
    /// Replaces the whole list, in this order. Fails with ``StoreError/duplicateThing(_:)`` if the
    /// list repeats an entry.
    case replaceThings([String])
    /// Takes a revision without changing stored data: for events about resources that are not
    /// stored (the fetched posts feed), so their event ids are durable revisions too and never
    /// repeat after a restart. `topic` names what was announced.
    case announce(topic: String)
}

/// An operation as it was committed, with the revision it took. Read back from the store's
/// change log by ``SQLiteStore/changes(after:)`` and delivered to external-change watchers.
public struct StoredChange: Sendable, Hashable {
    /// The global revision this change took.
    public var revision: UInt64
    /// What changed.
    public var operation: StoreOperation
    /// `true` when this `SQLiteStore` instance wrote it, `false` when another connection or
    /// process sharing the file did.
    public var isLocal: Bool

    public init(revision: UInt64, operation: StoreOperation, isLocal: Bool) {
        self.revision = revision
        self.operation = operation
        self.isLocal = isLocal
    }
}
