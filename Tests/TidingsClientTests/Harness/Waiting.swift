import Foundation
import OpenCombine
import XCTest
import TestFixtures

/// Everything a publisher sent since ``init(_:)``, with waits for a condition on it that fail
/// after a deadline (no sleeping in the hope that something happened).
@MainActor
final class Recorder<Value> {
    private(set) var values: [Value] = []
    private var subscription: AnyCancellable?
    private var waiters: [UUID: (condition: ([Value]) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = [:]

    init<P: Publisher>(_ publisher: P) where P.Output == Value, P.Failure == Never {
        subscription = publisher.sink { [weak self] value in
            MainActor.assumeIsolated { self?.append(value) }
        }
    }

    private func append(_ value: Value) {
        values.append(value)
        for (id, waiter) in waiters where waiter.condition(values) {
            waiters[id] = nil
            waiter.continuation.resume(returning: true)
        }
    }

    /// Waits until `condition` holds for the values so far; fails the test after `seconds`.
    @discardableResult
    func wait(_ what: String, within seconds: Double = 15, file: StaticString = #filePath, line: UInt = #line,
              until condition: @escaping ([Value]) -> Bool) async -> Bool {
        if condition(values) { return true }
        let met = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let id = UUID()
            waiters[id] = (condition, continuation)
            Task { @MainActor [weak self] in
                try? await Task.sleep(for: .seconds(seconds))
                // Still waiting at the deadline: give up on this waiter.
                if let waiter = self?.waiters.removeValue(forKey: id) { waiter.continuation.resume(returning: false) }
            }
        }
        if !met { XCTFail("timed out after \(seconds) s waiting for \(what); got \(values)", file: file, line: line) }
        return met
    }

    /// Waits for the latest value to satisfy `condition`.
    @discardableResult
    func waitForLatest(_ what: String, within seconds: Double = 15, file: StaticString = #filePath, line: UInt = #line,
                       where condition: @escaping (Value) -> Bool) async -> Bool {
        await wait(what, within: seconds, file: file, line: line) { $0.last.map(condition) ?? false }
    }
}

/// Polls `condition` on the main actor every 10 ms until it holds; fails after `seconds`.
@MainActor
func eventually(_ what: String, within seconds: Double = 15, file: StaticString = #filePath, line: UInt = #line,
                _ condition: () -> Bool) async {
    if await !TestFixtures.eventually(within: seconds, { () async in condition() }) {
        XCTFail("timed out after \(seconds) s waiting for \(what)", file: file, line: line)
    }
}
