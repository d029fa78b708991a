import Foundation

/// The one way a test waits for something it cannot be told about directly: poll `condition`
/// until it holds or `seconds` pass, and say whether it held. Tests that can wait for the event
/// that proves their point (a stream's next event, a process's exit) do that instead.
///
/// A thin wrapper per test target turns `false` into that framework's failure (this module has
/// no XCTest: benchmarks use it too).
@discardableResult
public func eventually(within seconds: Double = 5, every interval: Double = 0.01,
                       _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: interval)
    }
    return try condition()   // one look at the deadline itself
}

/// ``eventually(within:every:_:)-sync`` for async conditions, on the caller's actor (so a main-actor
/// test may read its main-actor state in `condition`); sleeps between looks without blocking.
@discardableResult
public nonisolated(nonsending) func eventually(within seconds: Double = 5, every interval: Double = 0.01,
                                               _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .seconds(interval))
    }
    return try await condition()
}
