import Foundation
import XCTest
@testable import TidingsStore

/// Prints acknowledged durable writes per second with 64 concurrent writers (fsync on);
/// asserts only correctness, never timing. `TIDINGS_STORE_BENCH_SECONDS` lengthens the run
/// (default 2 s per configuration).
final class PostgresThroughputMeasurement: PostgresTestCase {
    func testPrintAcknowledgedWritesPerSecond() async throws {
        let seconds = Double(ProcessInfo.processInfo.environment["TIDINGS_STORE_BENCH_SECONDS"] ?? "") ?? 2
        // Two commit lanes once hung here (stop 38: 64 writers waiting, every connection idle):
        // a call on a connection that had closed under it never ended, and its deadline waited
        // for it (PostgresCommitLanesTests).
        for (instances, lanes) in [(1, 1), (2, 1), (1, 2)] {
            let url = try makeDatabase()
            var options = PostgresStoreOptions.testing
            options.commitLanes = lanes
            // A measurement, not a liveness check (PostgresOutageTests is that): 64 writers on a
            // 2-core machine running other suites once went 5 s without an answer and failed it.
            options.queryTimeout = .seconds(30)
            var stores: [PostgresStore] = []
            for _ in 0..<instances { stores.append(try await makeStore(url, options: options)) }
            let writers = 64
            let deadline = Date().addingTimeInterval(seconds)
            let start = Date()
            let acknowledged = try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<writers {
                    let store = stores[writer % instances]
                    group.addTask {
                        var count = 0
                        while Date() < deadline {
                            let changes = try await store.commit(StoreWrite([set("k\(writer)", "\(count)")]))
                            XCTAssertEqual(changes.count, 1)
                            count += 1
                        }
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
            let elapsed = Date().timeIntervalSince(start)
            let snapshot = try await stores[0].loadSnapshot()
            XCTAssertEqual(snapshot.revision, UInt64(acknowledged))
            let batches = stores.reduce(0) { $0 + $1.statistics.batches }
            print(String(
                format: "PostgresStore throughput, %d instance(s), %d commit lane(s), %d writers: %7.0f acknowledged durable writes/s, %6.0f transactions/s, %5.1f writes per transaction",
                instances, lanes, writers, Double(acknowledged) / elapsed, Double(batches) / elapsed,
                Double(acknowledged) / Double(max(batches, 1))))
        }
    }
}
