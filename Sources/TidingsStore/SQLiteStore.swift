import Foundation
internal import GRDB

/// The durable embedded store: SQLite (through GRDB) in WAL mode with `synchronous = FULL`, in
/// the file `tidings.sqlite` under a data directory.
///
/// It holds the preferences, the ordered things and the global revision counter, which is
/// written in the same transaction as the changes it numbers: it strictly increases and never
/// goes backwards, also after a crash.
///
/// ```swift
/// let store = try SQLiteStore(directory: dataDir)
/// let snapshot = try store.loadSnapshot()                // once, at start-up
/// let revisions = try await store.commit([.setPreference(key: "age", json: "6")])
/// await store.close()                                    // at shutdown
/// ```
///
/// Durability: `commit` returns only after SQLite has committed and fsynced the write-ahead
/// log, so an acknowledged write survives SIGKILL and power loss. Concurrent `commit` calls are
/// grouped into one transaction (one fsync) while the previous one runs.
public final class SQLiteStore: Sendable {
    /// The database file's name inside the data directory.
    public static let fileName = "tidings.sqlite"

    /// Internal (not private) so tests can hold the writer queue to form a known batch.
    let writer: StoreWriter

    /// Opens (creating the directory and file if missing) and migrates the store.
    ///
    /// - Parameters:
    ///   - directory: the data directory.
    ///   - changeRetention: how many recent changes the change log keeps for
    ///     ``changes(after:)`` and other processes sharing the file.
    public init(directory: URL, changeRetention: UInt64 = 10_000) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            var configuration = Configuration()
            configuration.label = "tidings.store"
            // Another process sharing the file may hold the write lock for one transaction.
            configuration.busyMode = .timeout(10)
            configuration.prepareDatabase { db in
                // Set here rather than with `journalMode = .wal`, which would also select
                // synchronous = NORMAL: in WAL mode NORMAL may lose the last commits on power
                // loss, and a write is acknowledged only once durable.
                let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
                guard mode == "wal" else {
                    throw StoreError.database("could not switch \(db.description) to WAL mode")
                }
                try db.execute(sql: "PRAGMA synchronous = FULL")
            }
            let path = directory.appendingPathComponent(Self.fileName).path
            let database = try DatabaseQueue(path: path, configuration: configuration)
            try Schema.migrator.migrate(database)
            let revision = try database.read { try $0.storedRevision() }
            writer = StoreWriter(
                database: database, origin: UUID().uuidString,
                changeRetention: max(changeRetention, 1), revision: revision)
        } catch {
            throw StoreWriter.storeError(error)
        }
    }

    /// Everything the store holds. Blocks the calling thread for one read; meant for start-up.
    public func loadSnapshot() throws -> StoreSnapshot {
        do {
            return try writer.snapshot()
        } catch {
            throw StoreWriter.storeError(error)
        }
    }

    /// Applies `operations` in order, atomically, each taking the next global revision, and
    /// returns those revisions once the change is durable.
    ///
    /// Commits are applied in the order `commit` is called; revisions therefore increase in
    /// submission order across callers. Concurrent callers share one transaction, but each
    /// caller's operations succeed or fail together and alone: if one of them fails (e.g.
    /// ``StoreError/duplicateThing(_:)``), none of that call is applied and other callers are
    /// unaffected. Never blocks the caller's thread. Once submitted, a commit is not cancelled
    /// by cancelling the awaiting task. An empty list returns `[]` and writes nothing.
    ///
    /// - Throws: ``StoreError`` (``StoreError/closed`` after ``close()``).
    public func commit(_ operations: [StoreOperation]) async throws -> [UInt64] {
        if operations.isEmpty { return [] }
        return try await withCheckedThrowingContinuation { continuation in
            writer.submit(PendingCommit(operations: operations, continuation: continuation))
        }
    }

    /// Stops accepting commits, waits until every commit already submitted is durable and
    /// answered, stops watching external changes and closes the database. Idempotent.
    public func close() async {
        await writer.commits.closeAndDrain()
        writer.stopWatching()
        writer.queue.sync { try? writer.database.close() }
    }

    /// Counters since opening (transactions, acknowledged commits, operations).
    public var statistics: StoreStatistics { writer.commits.statistics }

    /// The committed changes after `revision`, in order, from the change log (local and
    /// external ones; see ``StoredChange/isLocal``). Blocks for one read.
    ///
    /// - Throws: ``StoreError/changesPruned(oldestAvailable:)`` when the log no longer reaches
    ///   back to `revision`; reload with ``loadSnapshot()`` then.
    public func changes(after revision: UInt64) throws -> [StoredChange] {
        do {
            return try writer.database.read { [origin = writer.origin] db in
                try db.readChanges(after: revision, origin: origin)
            }
        } catch {
            throw StoreWriter.storeError(error)
        }
    }

    /// Watches the file for commits by *other* processes or connections (a second server
    /// sharing the database) and calls `handler` with them, in revision order.
    ///
    /// Polls `PRAGMA data_version` every `interval` (an idle poll reads nothing else); a local
    /// commit also picks up external changes it finds, and hands them to `handler` *before*
    /// that commit's callers are answered. `handler` runs on the store's writer queue: keep it
    /// short and hop to your own executor in FIFO order (e.g. `DispatchQueue.main.async`) to
    /// keep that order. Calling it again replaces the handler.
    ///
    /// Delivers changes after the latest of: the last ``loadSnapshot()``, this instance's
    /// last commit. Start watching right after ``loadSnapshot()`` and before the first commit,
    /// so that no external change falls between the two.
    public func watchExternalChanges(
        every interval: Duration = .milliseconds(100),
        handler: @escaping @Sendable (ExternalChange) -> Void
    ) {
        let (seconds, attoseconds) = interval.components
        let nanoseconds = max(1_000_000, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        writer.startWatching(every: .nanoseconds(nanoseconds), handler: handler)
    }

    /// The value of `PRAGMA name` on the store's connection (for tests of its settings).
    func pragma(_ name: String) throws -> String? {
        try writer.database.inDatabase { try String.fetchOne($0, sql: "PRAGMA \(name)") }
    }
}
