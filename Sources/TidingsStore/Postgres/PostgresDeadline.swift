import Foundation
import Synchronization
import Logging
internal import PostgresNIO

/// Bounds how long a database call may take, so an unreachable server costs a prompt
/// ``StoreError/unavailable(_:)`` instead of a hang.
enum PostgresDeadline {
    struct Exceeded: Error, CustomStringConvertible {
        var timeout: Duration
        var description: String { "no answer from PostgreSQL within \(timeout)" }
    }

    /// Runs `operation`; if it has not finished after `timeout`, `onTimeout` runs (it should
    /// make the operation end, e.g. by closing its connection) and the call throws ``Exceeded``
    /// at once — whether or not the operation ever ends. It may not: postgres-nio never answers
    /// a query written to a connection whose channel has already closed (its handlers are gone,
    /// the write fails with no one to tell), so a call on a connection that closed under it
    /// waited for ever, with every connection idle at the database. The operation runs in a task
    /// of its own (whatever it returns after the deadline is dropped); the caller's cancellation
    /// is passed on to it and otherwise left to the operation: a cancelled reader does not cut
    /// a connection others share.
    static func run<T: Sendable>(
        _ timeout: Duration, onTimeout: @escaping @Sendable () -> Void,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = FirstOutcome<T>()
        let work = Task {
            do {
                outcome.settle(.success(try await operation()))
            } catch {
                outcome.settle(.failure(error))
            }
        }
        let timer = DispatchWorkItem {
            guard outcome.settle(.failure(Exceeded(timeout: timeout))) else { return }
            onTimeout()
            // The operation's own wait too, where it heeds cancellation: one that never ends
            // (above) would otherwise keep its task, and what it holds, for the process's life.
            work.cancel()
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(timeout.nanoseconds)), execute: timer)
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await outcome.value()
        } onCancel: {
            work.cancel()
        }
    }

    /// Connects within `timeout` (cancelling the attempt when it runs out).
    static func connect(
        _ configuration: PostgresConnection.Configuration, timeout: Duration, logger: Logger
    ) async throws -> PostgresConnection {
        let attempt = Task {
            try await PostgresConnection.connect(
                configuration: configuration, id: PostgresConnectionSlot.nextID(), logger: logger)
        }
        do {
            return try await withTaskCancellationHandler {
                try await run(timeout, onTimeout: { attempt.cancel() }) {
                    try await attempt.value
                }
            } onCancel: {
                attempt.cancel()
            }
        } catch {
            // An attempt that connects after all is closed, not left open behind the caller.
            Task { try? await attempt.value.close() }
            throw error
        }
    }

    /// The first of an operation's result and its deadline; whoever waits gets that one.
    final class FirstOutcome<T: Sendable>: Sendable {
        private struct State {
            var result: Result<T, any Error>?
            var waiter: CheckedContinuation<T, any Error>?
        }

        private let state = Mutex(State())

        /// Records `result` unless another came first; true if it was the first.
        @discardableResult
        func settle(_ result: Result<T, any Error>) -> Bool {
            let waiter: CheckedContinuation<T, any Error>?? = state.withLock { state in
                guard state.result == nil else { return .none }
                state.result = result
                defer { state.waiter = nil }
                return .some(state.waiter)
            }
            guard case let .some(waiting) = waiter else { return false }
            waiting?.resume(with: result)
            return true
        }

        /// The first result, once there is one.
        func value() async throws -> T {
            try await withCheckedThrowingContinuation { continuation in
                let ready: Result<T, any Error>? = state.withLock { state in
                    if let result = state.result { return result }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }

    /// A flag set once (e.g. "the timer fired"); a class so escaping closures can share it.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .acquiring) }
        func set() { value.store(true, ordering: .releasing) }
    }
}
