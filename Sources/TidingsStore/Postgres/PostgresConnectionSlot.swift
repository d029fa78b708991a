import Foundation
import Synchronization
import Logging
internal import PostgresNIO

/// One PostgreSQL connection, opened on first use and again after it broke.
///
/// Concurrent callers share one connection attempt. A connection that closed (server gone,
/// timeout) is replaced on the next ``connection()``. A slot made with `identified` also knows
/// its connection's server process (``backendPID``): the store's writers are, so that the
/// watcher can tell the store's own commits' notifications from other instances'.
actor PostgresConnectionSlot {
    private let configuration: PostgresConnection.Configuration
    private let connectTimeout: Duration
    private let logger: Logger
    private let identified: Bool
    private var current: PostgresConnection?
    private var connecting: Task<(PostgresConnection, Int32), any Error>?
    private var closed = false
    /// The server process id of the current connection (0: none, or not `identified`).
    private let currentPID = Atomic<Int32>(0)

    init(url: PostgresURL, connectTimeout: Duration, statementTimeout: Duration, logger: Logger, identified: Bool = false) {
        configuration = url.configuration(connectTimeout: connectTimeout, statementTimeout: statementTimeout)
        self.connectTimeout = connectTimeout
        self.logger = logger
        self.identified = identified
    }

    /// The server process of the open connection (`pg_backend_pid()`), 0 when there is none;
    /// readable from any thread.
    nonisolated var backendPID: Int32 { currentPID.load(ordering: .acquiring) }

    /// The open connection, connecting first when there is none (at most `connectTimeout`).
    func connection() async throws -> PostgresConnection {
        if closed { throw StoreError.closed }
        if let current, !current.isClosed { return current }
        current = nil
        currentPID.store(0, ordering: .releasing)
        if let connecting { return try await connecting.value.0 }
        let task = Task { [configuration, connectTimeout, logger, identified] in
            let connection = try await PostgresDeadline.connect(configuration, timeout: connectTimeout, logger: logger)
            guard identified else { return (connection, Int32(0)) }
            do {
                let pid = try await PostgresDeadline.run(connectTimeout, onTimeout: { connection.close().whenComplete { _ in } }) {
                    var pid: Int32 = 0
                    for try await (found) in try await connection.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) {
                        pid = found
                    }
                    return pid
                }
                return (connection, pid)
            } catch {
                try? await connection.close()
                throw error
            }
        }
        connecting = task
        defer { connecting = nil }
        let (connection, pid) = try await task.value
        if closed {
            try? await connection.close()
            throw StoreError.closed
        }
        current = connection
        currentPID.store(pid, ordering: .releasing)
        return connection
    }

    /// Drops `connection` (it failed or timed out) so the next caller reconnects.
    func discard(_ connection: PostgresConnection) {
        if current === connection {
            current = nil
            currentPID.store(0, ordering: .releasing)
        }
        connection.close().whenComplete { _ in }
    }

    /// Closes the connection for good.
    func close() async {
        closed = true
        currentPID.store(0, ordering: .releasing)
        connecting?.cancel()
        if let current { try? await current.close() }
        current = nil
    }

    /// A process-wide connection number for postgres-nio's log metadata.
    private static let counter = Atomic<Int>(0)
    nonisolated static func nextID() -> Int { counter.wrappingAdd(1, ordering: .relaxed).newValue }
}
