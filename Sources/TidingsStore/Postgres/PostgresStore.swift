import Foundation
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
public final class PostgresStore: ChangeStore, @unchecked Sendable {
    let url: PostgresURL
    let limits: ChangeStoreLimits
    let options: PostgresStoreOptions
    let logger: Logger
    /// One connection per commit lane (``PostgresStoreOptions/commitLanes``); the first one
    /// also runs the migration.
    let writers: [PostgresConnectionSlot]
    var writer: PostgresConnectionSlot { writers[0] }
    let reader: PostgresConnectionSlot
    private var queue: PostgresCommitQueue!

    let state = NSLock()
    private var available = false
    private var outageReason = "not opened yet"
    private var opened = false
    var closed = false  // guarded by `state`
    private var doorbells: [@Sendable () -> Void] = []
    var watcher: Task<Void, Never>?
    var listenConnection: PostgresConnection?

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
                url: url, connectTimeout: options.connectTimeout, statementTimeout: options.queryTimeout, logger: logger)
        }
        reader = PostgresConnectionSlot(
            url: self.url, connectTimeout: options.connectTimeout, statementTimeout: options.queryTimeout, logger: logger)
        queue = PostgresCommitQueue(maxBatch: options.maxBatch, lanes: writers.count) { [weak self] lane, writes in
            guard let self else { return writes.map { _ in .failure(.closed) } }
            return await self.commitBatch(writes, on: self.writers[lane])
        }
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
        if state.withLock({ opened }) { return }
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
        state.withLock {
            opened = true
            available = true
        }
        startWatching()
        logger.info("PostgreSQL store open", metadata: ["url": "\(url.redacted)", "schema": "\(PostgresSchema.version)"])
    }

    // MARK: - ChangeStore

    public var isAvailable: Bool { state.withLock { available } }

    /// Group-commit counters (for benchmarks and metrics).
    public var statistics: PostgresStoreStatistics { queue.statistics }

    var isClosed: Bool { state.withLock { closed } }

    public func watch(_ doorbell: @escaping @Sendable () -> Void) {
        state.withLock { doorbells.append(doorbell) }
    }

    public func commit(_ write: StoreWrite) async throws -> [Change] {
        try checkUsable()
        if let error = PostgresBatch.precheck(write) { throw error }
        return try await queue.submit(write)
    }

    public func loadSnapshot() async throws -> StoreSnapshot {
        let rows = try await withConnection(reader) { [logger] connection in
            try await connection.query("""
                SELECT 0::bigint, m.revision, m.things_revision, m.identity, NULL::text FROM meta m WHERE m.id = 1
                UNION ALL SELECT 1::bigint, p.revision, 0::bigint, p.key, p.value FROM preference p
                UNION ALL SELECT 2::bigint, t.position, 0::bigint, t.text, NULL::text FROM thing t
                UNION ALL SELECT 3::bigint, s.revision, 0::bigint, s.document, NULL::text FROM posts s
                """, logger: logger).collect()
        }
        return try decode { try PostgresSnapshotRows.snapshot(from: rows) }
    }

    /// Also throws ``StoreError/changesPruned(oldestAvailable:)`` when the counter is below
    /// `revision`: the database went back (a restore, a failover that lost commits).
    public func changes(after revision: UInt64, limit: Int) async throws -> [Change] {
        guard limit > 0 else { return [] }
        return try await changePage(after: revision, limit: limit).changes(after: revision)
    }

    public func changePage(after revision: UInt64, limit: Int) async throws -> ChangePage {
        let after = Int64(min(revision, UInt64(Int64.max - 1)))
        let count = Int64(max(0, limit))
        let rows = try await withConnection(reader) { [logger] connection in
            // One statement, so the counter, the identity, the oldest row, the reader's row's
            // commit time and the rows come from one snapshot.
            try await connection.query("""
                SELECT 0::bigint, m.revision, (SELECT min(c.revision) FROM change c),
                       m.identity, NULL::text, NULL::text, NULL::text,
                       (SELECT c.at FROM change c WHERE c.revision = \(after) AND c.revision > 0),
                       NULL::text, NULL::text, NULL::text
                  FROM meta m WHERE m.id = 1
                UNION ALL
                (SELECT 1::bigint, c.revision, NULL::bigint, c.kind, c.op, c.subject, c.value, c.at, c.actor, c.reason, c.before
                   FROM change c WHERE c.revision > \(after) ORDER BY c.revision LIMIT \(count))
                """, logger: logger).collect()
        }
        return try decode { try PostgresSnapshotRows.changePage(from: rows, after: UInt64(after)) }
    }

    public func recentChanges(maxCount: Int, maxBytes: Int) async throws -> [Change] {
        guard maxCount > 0, maxBytes > 0 else { return [] }
        let rows = try await withConnection(reader) { [logger] connection in
            try await connection.query("""
                SELECT c.revision, c.kind, c.op, c.subject, c.value, c.at, c.actor, c.reason, c.before FROM change c
                 ORDER BY c.revision DESC LIMIT \(Int64(maxCount))
                """, logger: logger).collect()
        }
        return try decode {
            var newestFirst: [Change] = []
            var bytes = 0
            for row in rows {
                let change = try PostgresHistoryRows.change(row)
                bytes += change.byteCount
                if bytes > maxBytes { break }
                newestFirst.append(change)
            }
            return newestFirst.reversed()
        }
    }

    public func close() async {
        let first: Bool = state.withLock {
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        await queue.close()
        await stopWatching()
        for writer in writers { await writer.close() }
        await reader.close()
        logger.info("PostgreSQL store closed")
    }

    // MARK: - Group commit

    /// One group-commit transaction: `tidings_commit_v1` with every write of the batch.
    private func commitBatch(_ writes: [StoreWrite], on writer: PostgresConnectionSlot) async -> [Result<[Change], StoreError>] {
        logger.trace("commit batch", metadata: ["writes": "\(writes.count)"])
        do {
            let payload = try PostgresBatch.encode(writes)
            let maxCount = Int64(max(0, min(limits.historyCount, Int(Int64.max))))
            let maxBytes = Int64(max(0, limits.historyBytes))
            let maxAge = limits.ageMicroseconds ?? -1
            let keepCount = Int64(max(0, limits.keepCount))
            let keepBytes = Int64(max(0, limits.keepBytes))
            let every = Int64(HistoryCheckpoints.interval)
            let now = Int64((Date().timeIntervalSince1970 * 1_000_000).rounded(.down))
            let answer = try await withConnection(writer) { [logger] connection in
                let rows = try await connection.query(
                    """
                    SELECT tidings_commit_v2(\(payload)::jsonb, \(now), \(maxCount), \(maxBytes), \(maxAge),
                                             \(keepCount), \(keepBytes), \(every))::text
                    """,
                    logger: logger)
                var answer: String?
                for try await row in rows { answer = try row.decode(String?.self) }
                guard let answer else { throw StoreError.database("the commit function returned nothing") }
                return answer
            }
            logger.trace("commit batch answered", metadata: ["bytes": "\(answer.utf8.count)"])
            let results = try PostgresBatch.decode(answer, writes: writes)
            for case let .failure(.database(message)) in results {
                logger.error("PostgreSQL rejected a write", metadata: ["error": "\(message)"])
            }
            return results
        } catch {
            let mapped = Self.storeError(error)
            if case .database = mapped {
                logger.error("PostgreSQL commit failed", metadata: ["error": "\(mapped)", "writes": "\(writes.count)"])
            }
            return writes.map { _ in .failure(mapped) }
        }
    }

    // MARK: - Connections and availability

    /// Throws at once when the store is closed, not open, or the database is known unreachable.
    func checkUsable() throws {
        try state.withLock {
            if closed { throw StoreError.closed }
            if !available { throw StoreError.unavailable(opened ? outageReason : "the store is not open") }
        }
    }

    /// Runs `body` on `slot`'s connection with the query timeout; connection trouble marks the
    /// database unavailable and throws ``StoreError/unavailable(_:)``.
    func withConnection<T: Sendable>(
        _ slot: PostgresConnectionSlot, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws -> T {
        try checkUsable()
        let connection: PostgresConnection
        do {
            connection = try await slot.connection()
        } catch {
            let mapped = Self.storeError(error)
            if case .unavailable = mapped, !Task.isCancelled { noteOutage(mapped) }
            throw mapped
        }
        do {
            return try await PostgresDeadline.run(options.queryTimeout, onTimeout: { connection.close().whenComplete { _ in } }) {
                try await body(connection)
            }
        } catch {
            let mapped = Self.storeError(error)
            if case .unavailable = mapped {
                await slot.discard(connection)
                // A caller that was cancelled says nothing about the database.
                if !Task.isCancelled { noteOutage(mapped) }
            }
            throw mapped
        }
    }

    /// Marks the database available or not; rings the doorbells when that changed.
    func setAvailable(_ isAvailable: Bool, reason: String = "") {
        let changed: Bool = state.withLock {
            guard !closed, available != isAvailable else { return false }
            available = isAvailable
            if !isAvailable { outageReason = reason }
            return true
        }
        guard changed else { return }
        if isAvailable {
            logger.notice("PostgreSQL reachable again", metadata: ["url": "\(url.redacted)"])
        } else {
            logger.warning("PostgreSQL unreachable", metadata: ["url": "\(url.redacted)", "error": "\(reason)"])
        }
        ring()
    }

    func noteOutage(_ error: StoreError) {
        if case let .unavailable(reason) = error { setAvailable(false, reason: reason) }
    }

    /// Rings every doorbell.
    func ring() {
        let bells = state.withLock { doorbells }
        for bell in bells { bell() }
    }

    /// Runs `body` turning decoding trouble into a logged ``StoreError/database(_:)``.
    private func decode<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            let mapped = Self.storeError(error)
            if case .database = mapped {
                logger.error("unexpected data from PostgreSQL", metadata: ["error": "\(mapped)"])
            }
            throw mapped
        }
    }
}
