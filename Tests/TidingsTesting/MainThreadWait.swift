import Foundation
import TestFixtures
import Synchronization

/// Runs the main run loop (which drains the main queue, where the main actor's work runs)
/// until `done` says so or `timeout` seconds pass; false on timeout. For a test on the main
/// thread that waits for in-process work it started there — the in-process server's routes,
/// writes and streams all finish on the main actor. Never sleeps past the moment `done` holds
/// by more than one run-loop turn.
func runMainLoop(timeout: Double, until done: () -> Bool) -> Bool {
    precondition(Thread.isMainThread, "in-process transports are driven from the main thread")
    let deadline = Date().addingTimeInterval(timeout)
    while !done() {
        let now = Date()
        guard now < deadline else { return false }
        _ = RunLoop.main.run(mode: .default, before: min(deadline, now.addingTimeInterval(0.01)))
    }
    return true
}

/// Runs `work` on the main actor and waits for its result on the main thread (see `runMainLoop`).
func awaitOnMain<T: Sendable>(timeout: Double, _ work: @escaping @MainActor () async -> T) throws -> T {
    let result = Mutex<T?>(nil)
    Task { @MainActor in
        let value = await work()
        result.withLock { $0 = value }
    }
    guard runMainLoop(timeout: timeout, until: { result.withLock({ $0 }) != nil }), let value = result.withLock({ $0 }) else {
        throw HTTPConnectionError.timeout
    }
    return value
}
