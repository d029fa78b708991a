public import Foundation
internal import GRDB
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The durable embedded store: SQLite (through GRDB) in WAL mode with `synchronous = FULL`, in
/// the file `tidings.sqlite` under a data directory. Several processes may share the directory:
/// the IMMEDIATE write transaction serialises their commits and numbers them in commit order,
/// and each process is told of the others' commits by ``watch(_:)``.
///
/// ```swift
/// let store = try SQLiteStore(directory: dataDir)
/// let snapshot = try await store.loadSnapshot()                     // once, at start-up
/// let changes = try await store.commit(StoreWrite([.addThing("YOLO")]))
/// await store.close()                                               // at shutdown
/// ```
///
/// Durability: `commit` returns only after SQLite has committed and fsynced the write-ahead
/// log, so an acknowledged write survives SIGKILL and power loss. Concurrent `commit` calls are
/// grouped into one transaction (one fsync) while the previous one runs.
public final class SQLiteStore: ChangeStore {
    /// The database file's name inside the data directory.
    public static let fileName = "tidings.sqlite"

    /// Internal (not private) so tests can hold the writer queue to form a known batch.
    let writer: StoreWriter
    private let pollInterval: DispatchTimeInterval
    /// A read-only connection of its own for the history's reads (pages, as-of, rollback's
    /// read): in WAL mode they read a snapshot without waiting behind the writer's commits, and
    /// a long page never holds up a write.
    private let historyReader: DatabaseQueue
    private let historyQueue = DispatchQueue(label: "tidings.store.history", qos: .userInitiated)
    /// Set by `close()` on the writer's queue before its connections close; every read checks it
    /// on the queue it runs on, so one asked after the close fails with `StoreError.closed` instead
    /// of reaching a closed SQLite handle (a crash: seen when a stream's catch-up read outlived a
    /// server stopped in-process).
    let isClosed = Atomic<Bool>(false)

    /// Opens (creating the directory and file if missing) and migrates the store.
    ///
    /// Several processes may open the same directory at the same moment: switching to WAL and
    /// migrating happen under an exclusive `flock` on `tidings.sqlite.lock`, so the second one
    /// waits for the first instead of failing with "database is locked".
    ///
    /// `clock` stamps each commit's records (`at`) and drives retention by age; tests move it.
    /// `checkpoints` says when the write-ahead log is checkpointed (``WALCheckpointer``).
    public init(directory: URL, limits: ChangeStoreLimits = ChangeStoreLimits(),
                pollInterval: Duration = .milliseconds(100),
                checkpoints: WALCheckpointPolicy = WALCheckpointPolicy(),
                clock: @escaping @Sendable () -> Date = { Date() }) throws {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent(Self.fileName).path
            let database = try Self.withStartupLock(path + ".lock") { () throws -> DatabaseQueue in
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
                let database = try DatabaseQueue(path: path, configuration: configuration)
                try Schema.migrator.migrate(database)
                return database
            }
            // Checkpoints leave the writer's path: its connection's WAL hook replaces SQLite's
            // auto-checkpoint and hands them to a connection of their own.
            let checkpointer = try WALCheckpointer(path: path, policy: checkpoints)
            database.inDatabase { checkpointer.install(on: $0) }
            writer = StoreWriter(database: database, checkpointer: checkpointer, limits: limits, clock: clock)
            var readOnly = Configuration()
            readOnly.label = "tidings.store.history"
            readOnly.readonly = true
            readOnly.busyMode = .timeout(10)
            historyReader = try DatabaseQueue(path: path, configuration: readOnly)
            let (seconds, attoseconds) = pollInterval.components
            self.pollInterval = .nanoseconds(max(1_000_000, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        } catch {
            throw StoreWriter.storeError(error)
        }
    }

    /// Runs `body` holding an exclusive advisory lock on `path` (created if missing).
    private static func withStartupLock<T>(_ path: String, _ body: () throws -> T) throws -> T {
        let fd = try systemCall("cannot open \(path)") { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        defer { closeDescriptor(fd) }
        try systemCall("cannot lock \(path)", retryingInterrupted: true) { flock(fd, LOCK_EX) }
        defer { systemCall("flock LOCK_UN", tolerating: "closing the descriptor releases the lock anyway") { flock(fd, LOCK_UN) } }
        return try body()
    }

    private static func closeDescriptor(_ fd: Int32) {
        systemCall("close", tolerating: "a lock file's descriptor: nothing was written through it") {
            #if canImport(Glibc)
            Glibc.close(fd)
            #else
            Darwin.close(fd)
            #endif
        }
    }

    public func loadSnapshot() async throws -> StoreSnapshot {
        try await read { try $0.readSnapshot() }
    }

    public func commit(_ write: StoreWrite) async throws -> [Change] {
        if write.operations.isEmpty { return [] }
        if let refusal = write.unstorableReason { throw refusal }
        return try await withCheckedThrowingContinuation { continuation in
            writer.submit(PendingCommit(write: write) { continuation.resume(with: $0) })
        }
    }

    /// Also throws ``StoreError/changesPruned(oldestAvailable:)`` when the counter is below
    /// `revision`: the file went back (restored from a copy), so what the reader applied is not its history.
    public func changes(after revision: UInt64, limit: Int) async throws -> [Change] {
        guard limit > 0 else { return [] }
        return try await changePage(after: revision, limit: limit).changes(after: revision)
    }

    public func changePage(after revision: UInt64, limit: Int) async throws -> ChangePage {
        try await read { try $0.readChangePage(after: revision, limit: limit) }
    }

    public func recentChanges(maxCount: Int, maxBytes: Int) async throws -> [Change] {
        try await read { try $0.readRecentChanges(maxCount: maxCount, maxBytes: maxBytes) }
    }

    public func history(_ query: HistoryQuery) async throws -> [Change] {
        try await readHistory { try $0.readHistory(query) }
    }

    public func state(asOf point: HistoryPoint, environment: String) async throws -> HistoricalState {
        try await readHistory { try $0.readState(asOf: point, environment: environment) }
    }

    /// A read on the history's own connection (one transaction: one snapshot), off the caller's thread.
    private func readHistory<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            historyQueue.async { [self, historyReader] in
                do {
                    guard !isClosed.load(ordering: .acquiring) else { throw StoreError.closed }
                    continuation.resume(returning: try historyReader.read(body))
                } catch {
                    continuation.resume(throwing: StoreWriter.storeError(error))
                }
            }
        }
    }

    /// Polls `PRAGMA data_version` (every `pollInterval` given at init) and rings on every
    /// commit made through another connection or process.
    public func watch(_ doorbell: @escaping @Sendable () -> Void) {
        writer.watch(every: pollInterval, doorbell: doorbell)
    }

    /// A local file is always reachable; its failures are errors of single commits.
    public var isAvailable: Bool { true }

    /// Stops accepting commits, waits until every commit already submitted is durable and
    /// answered, stops watching and closes the database. Idempotent.
    public func close() async {
        await writer.commits.closeAndDrain()
        writer.stopWatching()
        writer.queue.sync {
            isClosed.store(true, ordering: .releasing)
            try? writer.database.close()
        }
        historyQueue.sync { try? historyReader.close() }
        writer.checkpointer.close()
    }

    /// Counters since opening (transactions, acknowledged commits, operations).
    public var statistics: StoreStatistics { writer.commits.statistics }

    /// Write-ahead log checkpoints since opening (in the background, by the writer).
    public var checkpointStatistics: WALCheckpointStatistics { writer.checkpointer.statistics }

    /// A read on the writer's queue (the one connection), off the caller's thread.
    private func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writer.queue.async { [self, writer] in
                do {
                    guard !isClosed.load(ordering: .acquiring) else { throw StoreError.closed }
                    continuation.resume(returning: try writer.database.read(body))
                } catch {
                    continuation.resume(throwing: StoreWriter.storeError(error))
                }
            }
        }
    }

    /// The value of `PRAGMA name` on the store's connection (for tests of its settings).
    func pragma(_ name: String) throws -> String? {
        try writer.database.inDatabase { try String.fetchOne($0, sql: "PRAGMA \(name)") }
    }
}
