import Foundation

/// Runs `body` on Swift's cooperative pool and blocks the calling thread until it finishes.
/// Only for start-up, before the event loop (and with it the main actor) runs: `body` must not
/// need the main actor.
func blockingAwait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let semaphore = DispatchSemaphore(value: 0)
    let box = ResultBox<T>()
    Task.detached {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        semaphore.signal()
    }
    semaphore.wait()
    return try box.result!.get()
}

/// Written once by the task before it signals, read once after the wait: the semaphore orders
/// the two, which is why it needs no lock.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
