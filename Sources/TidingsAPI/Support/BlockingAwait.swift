import Foundation
import Synchronization

/// Runs `body` on Swift's cooperative pool and blocks the calling thread until it finishes.
/// Only for start-up, before the event loop (and with it the main actor) runs: `body` must not
/// need the main actor.
func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let semaphore = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task.detached {
        let result: Result<T, any Error>
        do { result = .success(try await body()) } catch { result = .failure(error) }
        box.result.withLock { $0 = result }
        semaphore.signal()
    }
    semaphore.wait()
    return try box.result.withLock { $0 }!.get()
}

/// Written once by the task before it signals, read once after the wait. The semaphore orders
/// the two; the `Mutex` (never contended) makes that checked rather than argued.
private final class ResultBox<T: Sendable>: Sendable {
    let result = Mutex<Result<T, any Error>?>(nil)
}
