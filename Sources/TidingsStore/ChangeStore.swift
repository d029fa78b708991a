/// A durable store of Tidings' state and of the one ordered sequence of its changes.
///
/// Two implementations: SQLite under a data directory (the embedded default; several
/// processes may share the file) and PostgreSQL (several instances on several machines).
/// Both keep the same rules:
///
/// - Every change takes the next value of one global revision counter, assigned *in commit
///   order* (a counter row updated inside the committing transaction, never a sequence), so
///   the change table is a contiguous run of revisions that readers see as a growing prefix.
/// - A write's conditions (``StoreWrite/expectedRevisions``, "thing already there", "thing not
///   found") are decided inside its transaction against durable state.
/// - A write that changes nothing takes no revision and leaves no change row.
/// - The change table is the history every instance tails (``changes(after:limit:)``) and
///   replays from (``recentChanges(maxCount:maxBytes:)``); it is pruned oldest first to at
///   most ``ChangeStoreLimits/historyCount`` rows and ``ChangeStoreLimits/historyBytes``
///   bytes (``Change/byteCount``).
///
/// All methods may be called from any thread; none blocks the caller's thread for a commit.
public protocol ChangeStore: AnyObject, Sendable, HistoryStore {
    /// Everything the store holds now, read in one transaction.
    func loadSnapshot() async throws -> StoreSnapshot

    /// Commits `write` atomically and durably and returns the changes it made, in revision
    /// order (contiguous revisions); `[]` when it changed nothing (no revision taken). Each
    /// operation makes at most one change, in operation order, recording what it set (so
    /// ``commit(_:meanings:interpret:)`` can hand each change back with its writer's meaning).
    ///
    /// Concurrent calls may share one transaction (group commit), each in its own savepoint,
    /// so one write's failure never costs another write.
    ///
    /// - Throws: ``StoreError/preconditionFailed(key:current:)``,
    ///   ``StoreError/duplicateThing(_:)``, ``StoreError/thingNotFound(_:)`` (nothing written);
    ///   ``StoreError/unavailable(_:)`` when the database cannot be reached (nothing written —
    ///   answer 503 and let the client retry); ``StoreError/closed`` after ``close()``.
    func commit(_ write: StoreWrite) async throws -> [Change]

    /// Committed changes after `revision`, oldest first, at most `limit` of them (any writer's).
    ///
    /// - Throws: ``StoreError/changesPruned(oldestAvailable:)`` when the table no longer holds
    ///   the change right after `revision`: reload with ``loadSnapshot()`` instead.
    func changes(after revision: UInt64, limit: Int) async throws -> [Change]

    /// ``changes(after:limit:)`` with the database's identity, its counter and the commit time
    /// of the change at `revision`, all read in one transaction (see ``ChangePage``). Unlike
    /// ``changes(after:limit:)`` it answers (with no changes) when the counter is below
    /// `revision`, so the reader can tell why it must reload.
    ///
    /// - Throws: ``StoreError/changesPruned(oldestAvailable:)`` when the counter is not below
    ///   `revision` but the table no longer holds the change right after it.
    func changePage(after revision: UInt64, limit: Int) async throws -> ChangePage

    /// The newest retained changes, oldest first, at most `maxCount` of them and at most
    /// `maxBytes` bytes (counted with ``Change/byteCount``): the replay history at start-up.
    func recentChanges(maxCount: Int, maxBytes: Int) async throws -> [Change]

    /// Rings `doorbell` (on any thread, possibly spuriously) when changes *may* have been
    /// committed by another process or instance, and when ``isAvailable`` changed. It is only
    /// a doorbell: the caller reads ``changes(after:limit:)`` from the last revision it applied,
    /// so a missed ring loses nothing. Implementations also ring on a slow timer as a safety net.
    func watch(_ doorbell: @escaping @Sendable () -> Void)

    /// False while the database cannot be reached (then commits throw ``StoreError/unavailable(_:)``).
    var isAvailable: Bool { get }

    /// Stops accepting commits, waits for those already submitted, stops watching, disconnects.
    func close() async

    /// Takes (or renews) the cluster-wide lease `name` for `holder` until `duration` from now,
    /// unless another holder has it and it has not expired; says whether it was free, taken
    /// over from a holder that did not give it back, or refused (``LeaseTake``). Used so that
    /// one instance, not every one, fetches the posts feed at a time and for each refresh.
    /// Rows expired for ``LeasePurge/grace`` are purged, a few per call.
    func takeLease(_ name: String, holder: String, duration: Duration) async throws -> LeaseTake

    /// Gives `name` back if `holder` has it (deletes its row): the next take finds it free
    /// (``LeaseTake/taken``), not taken over. Nothing when another holder has it.
    func releaseLease(_ name: String, holder: String) async throws
}

/// How much history a ``ChangeStore`` keeps: upper bounds (`--history-bytes`, `--history-days`,
/// and a row count for tests) and lower bounds (`--replay-buffer`, `--replay-bytes`: the newest
/// rows within both are kept whatever the upper bounds say, so resume always reaches them).
///
/// Rows are dropped oldest first. Dropping never loses the current state: what a dropped row
/// set is folded into the store's history base (see ``HistoryFloor``), so as-of reads and
/// rollbacks work from the oldest retained revision on.
public struct ChangeStoreLimits: Sendable, Hashable {
    /// Change rows kept at most.
    public var historyCount: Int
    /// Bytes of change rows kept at most (sum of ``Change/byteCount``).
    public var historyBytes: Int
    /// Rows older than this (by ``Change/at``) are dropped; nil keeps them whatever their age.
    public var historyAge: Duration?
    /// The newest rows kept whatever the upper bounds say: at least this many rows...
    public var keepCount: Int
    /// ... as long as they also fit in this many bytes (the replay window of `Last-Event-ID`).
    public var keepBytes: Int

    public init(historyCount: Int = Int.max, historyBytes: Int = 256 << 20, historyAge: Duration? = nil,
                keepCount: Int = 0, keepBytes: Int = 0) {
        self.historyCount = historyCount
        self.historyBytes = historyBytes
        self.historyAge = historyAge
        self.keepCount = keepCount
        self.keepBytes = keepBytes
    }

    /// Microseconds of ``historyAge`` (nil: no age bound).
    var ageMicroseconds: Int64? {
        historyAge.map { Int64($0.components.seconds) * 1_000_000 + Int64($0.components.attoseconds / 1_000_000_000_000) }
    }
}

/// One write: operations applied in order, atomically, under conditions.
public struct StoreWrite: Sendable, Hashable {
    public var operations: [WriteOperation]
    /// Preference keys whose durable revision (0 when never set) must be one of these set's
    /// members (`If-Match`); an empty set never matches. Checked before any operation runs.
    public var expectedRevisions: [String: Set<UInt64>]
    /// `If-Match` on the global revision: the revision the store is at when this write runs
    /// must be one of these (nil: no condition). Fails with
    /// ``StoreError/preconditionFailed(key:current:)`` with an empty key.
    public var expectedGlobalRevisions: Set<UInt64>?
    /// Who asked for it (a credential's name), recorded with every change it makes.
    public var actor: String
    /// Why (`Tidings-Reason`), recorded with every change it makes.
    public var reason: String?
    /// The environment every operation of the write applies to (``EnvironmentName/default``
    /// unless said); it must exist when the write runs (else ``StoreError/unknownEnvironment(_:)``),
    /// except for ``WriteOperation/createEnvironment(copiedFrom:limit:)``, which makes it.
    public var environment: String
    /// The schedule this write applies (nil: none). Its outcome — `applied`, the revision the
    /// write left the store at, `late`, the commit time — is recorded in the write's own
    /// transaction, conditional on `holder` still holding the claim; without it the write
    /// fails with ``StoreError/scheduleNotHeld(_:)`` and writes nothing. So a schedule is
    /// applied exactly once, whichever instance dies when.
    public var schedule: ScheduleCompletion?

    public init(_ operations: [WriteOperation], expectedRevisions: [String: Set<UInt64>] = [:],
                actor: String = "", reason: String? = nil, environment: String = EnvironmentName.default) {
        self.operations = operations
        self.environment = environment
        self.expectedRevisions = expectedRevisions
        self.actor = actor
        self.reason = reason
        self.expectedGlobalRevisions = nil
        self.schedule = nil
    }
}

/// One operation of a ``StoreWrite``. Each one that changes something takes the next revision.
public enum WriteOperation: Sendable, Hashable {
    /// Sets preference `key` to `json` (one JSON value as canonical UTF-8 text), or resets it
    /// to its default when `json` is nil (the row keeps the reset's revision, value NULL).
    /// `defaultJSON` is the declared default, so that "set to the value it already has"
    /// (stored value, or the default when none is stored) is recognised as no change.
    case setPreference(key: String, json: String?, defaultJSON: String)
    /// Appends `thing`. Fails with ``StoreError/duplicateThing(_:)`` if present.
    case addThing(String)
    /// Removes `thing`. Fails with ``StoreError/thingNotFound(_:)`` if absent.
    case removeThing(String)
    /// Replaces the whole list, in this order; the same list in the same order is no change.
    /// Fails with ``StoreError/duplicateThing(_:)`` if the list repeats an entry.
    case replaceThings([String])
    /// Stores the posts feed's document (one line of JSON, what `GET /posts` and the `posts`
    /// event carry); the same text as stored is no change. Posts are shared by every
    /// environment (their change is recorded in `default`).
    case setPosts(String)
    /// Creates the write's environment (empty: every preference at its default, no things),
    /// recording `copiedFrom` as where it came from; the operations after it fill it in the
    /// same transaction. Fails with ``StoreError/environmentExists(_:)`` when it exists, and
    /// with ``StoreError/tooManyEnvironments(limit:)`` when `limit` environments exist already.
    case createEnvironment(copiedFrom: String?, limit: Int)
    /// Deletes the write's environment: its values, things and history go (its history rows
    /// become ``Change/Kind/environment(_:copiedFrom:)`` `.erased` rows, so the change table
    /// stays contiguous). `default` cannot be deleted (``StoreError/defaultEnvironment``).
    case deleteEnvironment
}

/// Environment names (API.md "Environments").
public enum EnvironmentName {
    /// The environment the unprefixed paths address; it always exists.
    public static let `default` = "default"

    /// `^[a-z][a-z0-9-]{0,31}$`.
    public static func isValid(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...32).contains(bytes.count), (97...122).contains(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { (97...122).contains($0) || (48...57).contains($0) || $0 == 45 }
    }
}

/// One committed change, as every instance reads it from the change table.
public struct Change: Sendable, Hashable {
    /// What a change did to the thing list.
    public enum ThingsOp: String, Sendable, Hashable {
        case add, remove, replace
    }

    /// What a change did to an environment.
    public enum EnvironmentOp: String, Sendable, Hashable {
        case created, deleted
        /// A row of a deleted environment's history: it holds nothing any more, and only keeps
        /// the change table contiguous (every reader skips it).
        case erased
    }

    /// What changed: one preference, the thing list, or the posts document.
    public enum Kind: Sendable, Hashable {
        /// Preference `key` now holds `json` (nil: its default).
        case preference(key: String, json: String?)
        /// The thing list after `op` (with the thing added or removed).
        case things(op: ThingsOp, thing: String?, list: [String])
        /// The posts document.
        case posts(String)
        /// The change's environment was created (as a copy of `copiedFrom`, when set) or
        /// deleted, or the row is what is left of a deleted environment's history.
        case environment(EnvironmentOp, copiedFrom: String?)
    }

    /// The global revision this change took.
    public var revision: UInt64
    public var kind: Kind
    /// When it was committed: microseconds since 1970 (UTC) on the committing server's clock,
    /// never earlier than the change before it (so "as of a time" is one revision).
    public var at: Int64
    /// The name of the credential that made it ("" for rows older than the history).
    public var actor: String
    /// The writer's `Tidings-Reason`, if any.
    public var reason: String?
    /// What it replaced: a preference's previous stored JSON (nil: its default), or before a
    /// things replacement the previous list as a JSON array; nil for add, remove and posts.
    public var before: String?
    /// The environment it happened in (posts changes: `default`; erased rows: "").
    public var environment: String

    public init(revision: UInt64, kind: Kind, at: Int64 = 0, actor: String = "", reason: String? = nil,
                before: String? = nil, environment: String = EnvironmentName.default) {
        self.environment = environment
        self.revision = revision
        self.kind = kind
        self.at = at
        self.actor = actor
        self.reason = reason
        self.before = before
    }

    /// What the row costs against ``ChangeStoreLimits/historyBytes``: the UTF-8 bytes of its
    /// text fields plus a fixed 32 for the rest. Both stores count the same way.
    public var byteCount: Int {
        let metadata = actor.utf8.count + (reason?.utf8.count ?? 0) + (before?.utf8.count ?? 0)
        switch kind {
        case let .preference(key, json): return 32 + metadata + key.utf8.count + (json?.utf8.count ?? 0)
        case let .things(_, thing, list): return 32 + metadata + (thing?.utf8.count ?? 0) + list.reduce(0) { $0 + $1.utf8.count + 3 }
        case let .posts(document): return 32 + metadata + document.utf8.count
        case let .environment(_, copiedFrom): return 32 + metadata + environment.utf8.count + (copiedFrom?.utf8.count ?? 0)
        }
    }
}
