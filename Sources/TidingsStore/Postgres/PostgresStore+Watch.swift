import Foundation
import Synchronization
import Logging
internal import PostgresNIO

/// The watcher: one connection LISTENing on ``PostgresSchema/channel`` (every commit
/// notifies), a probe-and-ring every ``PostgresStoreOptions/pollInterval`` as a safety net,
/// and reconnection with exponential back-off. It also decides when an outage is over.
extension PostgresStore {
    private struct ListenEnded: Error, CustomStringConvertible {
        var description: String { "the LISTEN connection ended" }
    }

    func startWatching() {
        let task = Task { [weak self] in
            guard let self else { return }
            await self.watchLoop()
        }
        state.withLock { $0.watcher = task }
    }

    func stopWatching() async {
        let (task, connection) = state.withLock { ($0.watcher, $0.listenConnection) }
        task?.cancel()
        if let connection { try? await connection.close() }
        await task?.value
    }

    private func watchLoop() async {
        var delay = options.reconnectDelay.lowerBound
        var reconnected = false
        while !Task.isCancelled && !isClosed {
            let attempt = ContinuousClock.now
            do {
                let connection = try await PostgresDeadline.connect(
                    url.configuration(connectTimeout: options.connectTimeout, statementTimeout: options.queryTimeout),
                    timeout: options.connectTimeout, logger: logger)
                let keep: Bool = state.withLock { state in
                    guard !state.closed else { return false }
                    state.listenConnection = connection
                    return true
                }
                guard keep else {
                    try? await connection.close()
                    return
                }
                defer {
                    state.withLock { $0.listenConnection = nil }
                    connection.close().whenComplete { _ in }
                }
                if reconnected { try await migrateAfterOutage() }
                reconnected = true
                try await listen(on: connection)
            } catch {
                if Task.isCancelled || isClosed { return }
                // A connection that held for a while starts the back-off over; one that keeps
                // failing at once backs off further.
                if ContinuousClock.now - attempt > .seconds(5) { delay = options.reconnectDelay.lowerBound }
                setAvailable(false, reason: Self.storeError(error).reason)
                logger.debug("PostgreSQL watcher reconnecting", metadata: ["in": "\(delay)", "error": "\(error)"])
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, options.reconnectDelay.upperBound)
            }
        }
    }

    /// A database re-created while this instance was cut off from it (dropped, created empty)
    /// has no schema: give it one before anyone reads it (idempotent, ordered by the migration's
    /// advisory lock; a current schema costs two queries). On the reader's connection, not the
    /// LISTEN one, which ``stopWatching()`` closes under whatever runs on it.
    private func migrateAfterOutage() async throws {
        let connection = try await reader.connection()
        do {
            try await PostgresDeadline.run(options.queryTimeout, onTimeout: { connection.close().whenComplete { _ in } }) {
                [logger] in try await PostgresMigration.migrate(connection, logger: logger)
            }
        } catch {
            await reader.discard(connection)
            throw error
        }
    }

    /// LISTENs on `connection` until it fails.
    ///
    /// A notification sent by one of this store's own writer connections is not rung: that
    /// commit's changes reach the instance through its answer (the write pipeline delivers
    /// them), so reading the change table for them again would only cost both sides a query
    /// and a decoding per batch. (If that answer is lost, the commit failed from the caller's
    /// view; ``commitGroup(_:on:)`` rings then, and the poll below rings anyway.) The
    /// notification's sender is the `NotificationResponse`'s process id, which postgres-nio's
    /// notification sequence drops: hence its listener callback.
    private func listen(on connection: PostgresConnection) async throws {
        let listener = connection.addListener(channel: PostgresSchema.channel) { [weak self] _, notification in
            self?.notified(by: notification.backendPID)
        }
        defer { listener.stop() }
        // The LISTEN goes out ahead of this query on the connection: once it is answered, no
        // commit can be missed, and whatever was committed before is read by the callers now.
        try await PostgresDeadline.run(options.queryTimeout, onTimeout: { connection.close().whenComplete { _ in } }) {
            try await connection.query("SELECT 1", logger: self.logger)
            return ()
        }
        setAvailable(true)
        ring()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await connection.closeFuture.get()
                throw ListenEnded()
            }
            group.addTask { [weak self] in
                while let self, !Task.isCancelled {
                    try await Task.sleep(for: self.options.pollInterval)
                    try await PostgresDeadline.run(self.options.queryTimeout, onTimeout: {
                        connection.close().whenComplete { _ in }
                    }) {
                        try await connection.query("SELECT 1", logger: self.logger)
                        return ()
                    }
                    self.setAvailable(true)
                    self.ring()
                }
            }
            do {
                try await group.next()
            } catch {
                connection.close().whenComplete { _ in }
                group.cancelAll()
                throw error
            }
            connection.close().whenComplete { _ in }
            group.cancelAll()
            throw ListenEnded()
        }
    }

    /// A commit was notified by server process `pid`: ring unless it is one of this store's writers.
    func notified(by pid: Int32) {
        if pid != 0 && writers.contains(where: { $0.backendPID == pid }) { return }
        ring()
    }
}

extension StoreError {
    /// The message of an ``unavailable(_:)`` (or any error's description otherwise).
    var reason: String {
        if case let .unavailable(reason) = self { return reason }
        return "\(self)"
    }
}
