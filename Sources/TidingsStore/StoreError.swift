/// Errors the store reports. SQLite failures are wrapped in ``database(_:)`` so callers do not
/// need to import GRDB.
public enum StoreError: Error, Sendable, Hashable {
    /// The store was closed; nothing was written.
    case closed
    /// `addThing` or `replaceThings` would make the list hold this entry twice.
    case duplicateThing(String)
    /// `removeThing` named a thing that is not in the list.
    case thingNotFound(String)
    /// `setPreference` was given text that is not one JSON value.
    case invalidJSON(key: String)
    /// Text of a write (named here: "a thing", "the actor", ...) holds U+0000, which no store
    /// keeps (PostgreSQL's `text` cannot); nothing was written. See ``StoreWrite/unstorableReason``.
    case unstorableText(String)
    /// The change log no longer holds every change after the requested revision (old entries
    /// are pruned); reload with ``SQLiteStore/loadSnapshot()`` instead.
    case changesPruned(oldestAvailable: UInt64)
    /// `If-Match`: the key's durable revision is `current`, not one the write expected.
    case preconditionFailed(key: String, current: UInt64)
    /// An as-of read or rollback named a revision (or time) older than the retained history;
    /// `oldestReadable` is the oldest revision that can still be read.
    case beyondHistory(oldestReadable: UInt64)
    /// An as-of read named a revision newer than the current one.
    case futureRevision(current: UInt64)
    /// The database cannot be reached right now (PostgreSQL down, connection lost); nothing
    /// was written. Retry later.
    case unavailable(String)
    /// The write's environment does not exist (never created, or deleted meanwhile).
    case unknownEnvironment(String)
    /// `createEnvironment`: it exists already; nothing was written.
    case environmentExists(String)
    /// `createEnvironment`: `limit` environments exist already.
    case tooManyEnvironments(limit: Int)
    /// `deleteEnvironment` of `default`, which always exists.
    case defaultEnvironment
    /// A write that applies a schedule (``StoreWrite/schedule``) whose claim its holder no
    /// longer has: the claim expired and another instance took it, or the schedule was
    /// cancelled or finished meanwhile. Nothing was written.
    case scheduleNotHeld(String)
    /// SQLite failed (I/O error, disk full, file locked by another process for too long, ...).
    case database(String)
}
