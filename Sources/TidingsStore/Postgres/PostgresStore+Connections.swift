import Foundation
import Synchronization
internal import PostgresNIO

/// Connections and availability: every database call goes through ``withConnection(_:_:)``,
/// which refuses at once while the store is closed or the database known unreachable, bounds
/// the call by the query timeout, and turns connection trouble into an outage (doorbells ring
/// when availability changes, so callers catch up once it is back).
extension PostgresStore {
    /// Throws at once when the store is closed, not open, or the database is known unreachable.
    func checkUsable() throws {
        try state.withLock { state in
            if state.closed { throw StoreError.closed }
            if !state.available {
                throw StoreError.unavailable(state.opened ? state.outageReason : "the store is not open")
            }
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
            // A statement that lost a race is retried by its caller; the connection is fine.
            if case .unavailable = mapped, Self.isConnectionTrouble(error) {
                await slot.discard(connection)
                // A caller that was cancelled says nothing about the database.
                if !Task.isCancelled { noteOutage(mapped) }
            }
            throw mapped
        }
    }

    /// Marks the database available or not; rings the doorbells when that changed.
    func setAvailable(_ isAvailable: Bool, reason: String = "") {
        let changed: Bool = state.withLock { state in
            guard !state.closed, state.available != isAvailable else { return false }
            state.available = isAvailable
            if !isAvailable { state.outageReason = reason }
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
        let bells = state.withLock { $0.doorbells }
        for bell in bells { bell() }
    }
}
