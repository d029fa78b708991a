import Foundation
import XCTest
@testable import TidingsStore

/// Prints durable commit throughput; asserts only correctness, never timing.
/// `TIDINGS_STORE_BENCH_SECONDS` lengthens the run (default 2 s per configuration).
final class ThroughputMeasurement: XCTestCase {
    func testPrintDurableCommitThroughput() async throws {
        let seconds = Double(ProcessInfo.processInfo.environment["TIDINGS_STORE_BENCH_SECONDS"] ?? "") ?? 2
        for clients in [1, 64] {
            let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
            let deadline = Date().addingTimeInterval(seconds)
            let start = Date()
            let acknowledged = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in 0..<clients {
                    group.addTask {
                        var count = 0
                        while Date() < deadline {
                            _ = try await store.commit([.setPreference(key: "k\(client)", json: "\(count)")])
                            count += 1
                        }
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
            let elapsed = Date().timeIntervalSince(start)
            let stats = store.statistics
            XCTAssertEqual(stats.commits, UInt64(acknowledged))
            XCTAssertEqual(try store.syncSnapshot().revision, UInt64(acknowledged))
            print(String(
                format: "store throughput, %2d committers: %7.0f acknowledged durable writes/s, %6.0f transactions (fsyncs)/s, %5.1f commits per transaction",
                clients, Double(acknowledged) / elapsed, Double(stats.transactions) / elapsed,
                Double(stats.commits) / Double(max(stats.transactions, 1))))
            await store.close()
        }
    }
}
