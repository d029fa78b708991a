import Foundation
import Synchronization
public import Logging
internal import PostgresNIO

/// The ``ChangeStore`` on PostgreSQL, for several Tidings instances on one database
/// (`--database-url postgres://user:password@host:port/database`).
///
/// ```swift
/// let store = try PostgresStore(url: url, limits: limits, logger: logger)
/// try await store.open()          // connects (retrying up to startupTimeout), migrates, starts watching
/// store.watch { /* read store.changes(after: applied, limit:) */ }
/// ...
/// await store.close()
/// ```
///
/// Three connections: one per commit lane (group commit, ``PostgresCommitQueue``), one for reads,
/// and one that LISTENs for other instances' commits (``watch(_:)``). While the database
/// cannot be reached, ``isAvailable`` is false and every call throws
/// ``StoreError/unavailable(_:)`` at once; the watcher reconnects with back-off and flips it
/// back, ringing the doorbells so callers catch up.
///
/// Checked `Sendable`: everything is `let`, and what changes is in the `state` `Mutex`.
public final class PostgresStore: ChangeStore, Sendable {
    let url: PostgresURL
    let limits: ChangeStoreLimits
    let options: PostgresStoreOptions
    let logger: Logger
    /// One connection per commit lane (``PostgresStoreOptions/commitLanes``); the first one
    /// also runs the migration.
    let writers: [PostgresConnectionSlot]
    var writer: PostgresConnectionSlot { writers[0] }
    let reader: PostgresConnectionSlot
    let queue: PostgresCommitQueue

    /// What changes after `init`: availability, open/closed, doorbells, the watcher.
    struct State {
        var available = false
        var outageReason = "not opened yet"
        var opened = false
        var closed = false
        var doorbells: [@Sendable () -> Void] = []
        var watcher: Task<Void, Never>?
        var listenConnection: PostgresConnection?
    }

    let state = Mutex(State())

    /// Parses `url` (throws ``StoreError/database(_:)`` if it is not a postgres:// URL); does not
    /// connect yet — call ``open()``.
    public init(
        url: String, limits: ChangeStoreLimits = ChangeStoreLimits(),
        logger: Logger = Logger(label: "tidings.store.postgres"), options: PostgresStoreOptions = PostgresStoreOptions()
    ) throws {
        self.url = try PostgresURL(url)
        self.limits = limits
        self.options = options
        self.logger = logger
        writers = (0..<max(1, options.commitLanes)).map { [url = self.url] _ in
            PostgresConnectionSlot(
                url: url, connectTimeout: options.connectTimeout, statementTimeout: options.queryTimeout, logger: logger,
                identified: true)
        }
        reader = PostgresConnectionSlot(
            url: self.url, connectTimeout: options.connectTimeout, statementTimeout: options.queryTimeout, logger: logger)
        queue = PostgresCommitQueue(maxBatch: options.maxBatch, lanes: writers.count)
    }

    /// Creates and opens a store.
    public static func connect(
        url: String, limits: ChangeStoreLimits = ChangeStoreLimits(),
        logger: Logger = Logger(label: "tidings.store.postgres"), options: PostgresStoreOptions = PostgresStoreOptions()
    ) async throws -> PostgresStore {
        let store = try PostgresStore(url: url, limits: limits, logger: logger, options: options)
        try await store.open()
        return store
    }

    /// Connects (retrying with back-off for up to ``PostgresStoreOptions/startupTimeout`` while
    /// the database is unreachable), creates or migrates the schema under an advisory lock
    /// (safe when several instances start together), and starts watching for changes.
    ///
    /// - Throws: ``StoreError/unavailable(_:)`` if the database stayed unreachable;
    ///   ``StoreError/database(_:)`` if the schema is newer than this build or migration failed.
    public func open() async throws {
        if state.withLock({ $0.opened }) { return }
        let deadline = ContinuousClock.now + options.startupTimeout
        var delay = options.reconnectDelay.lowerBound
        while true {
            if isClosed { throw StoreError.closed }
            do {
                let connection = try await writer.connection()
                do {
                    try await PostgresDeadline.run(options.queryTimeout, onTimeout: { connection.close().whenComplete { _ in } }) {
                        [logger] in try await PostgresMigration.migrate(connection, logger: logger)
                    }
                } catch {
                    // Closing the session releases the advisory lock if migration stopped half-way.
                    await writer.discard(connection)
                    throw error
                }
                break
            } catch {
                let mapped = Self.storeError(error)
                guard case .unavailable = mapped, ContinuousClock.now + delay < deadline else {
                    logger.error("PostgreSQL store could not open", metadata: ["url": "\(url.redacted)", "error": "\(mapped)"])
                    throw mapped
                }
                logger.warning("PostgreSQL not reachable yet; retrying", metadata: ["url": "\(url.redacted)", "error": "\(mapped)"])
                try await Task.sleep(for: delay)
                delay = min(delay * 2, options.reconnectDelay.upperBound)
            }
        }
        state.withLock { state in
            state.opened = true
            state.available = true
        }
        startWatching()
        logger.info("PostgreSQL store open", metadata: ["url": "\(url.redacted)", "schema": "\(PostgresSchema.version)"])
    }

    // MARK: - ChangeStore (reads: PostgresStore+Reads, writes: PostgresStore+Commit)

    public var isAvailable: Bool { state.withLock { $0.available } }

    /// Group-commit counters (for benchmarks and metrics).
    public var statistics: PostgresStoreStatistics { queue.statistics }

    var isClosed: Bool { state.withLock { $0.closed } }

    public func watch(_ doorbell: @escaping @Sendable () -> Void) {
        state.withLock { $0.doorbells.append(doorbell) }
    }

    public func close() async {
        let first: Bool = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        await queue.close()
        await stopWatching()
        for writer in writers { await writer.close() }
        await reader.close()
        logger.info("PostgreSQL store closed")
    }
}
