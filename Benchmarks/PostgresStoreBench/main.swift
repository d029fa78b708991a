// Acknowledged durable writes per second of PostgresStore with 64 concurrent writers, on a
// throwaway PostgreSQL cluster (fsync on) started for the run:
//
//   swift run -c release PostgresStoreBench [seconds per configuration, default 5]
//
// Prints one line per configuration: one instance, and two instances on one database.
import Foundation
import Logging
import TestFixtures
import TidingsStore

@main
struct PostgresStoreBench {
    static func main() async throws {
        let seconds = CommandLine.arguments.dropFirst().first.flatMap(Double.init) ?? 5
        let cluster = try PostgresCluster(database: "postgres_bench")
        defer { cluster.destroy() }
        var logger = Logger(label: "bench") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        for instances in [1, 2] {
            let database = "bench_\(instances)"
            try cluster.psql("CREATE DATABASE \(database)", database: "postgres")
            let url = "postgres://postgres@127.0.0.1:\(cluster.port)/\(database)"
            var stores: [PostgresStore] = []
            for _ in 0..<instances { stores.append(try await PostgresStore.connect(url: url, logger: logger)) }
            let writers = 64
            let deadline = Date().addingTimeInterval(seconds)
            let start = Date()
            let acknowledged = try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<writers {
                    let store = stores[writer % instances]
                    group.addTask {
                        var count = 0
                        while Date() < deadline {
                            _ = try await store.commit(StoreWrite([
                                .setPreference(key: "k\(writer)", json: "\(count)", defaultJSON: "null"),
                            ]))
                            count += 1
                        }
                        return count
                    }
                }
                var total = 0
                for try await count in group { total += count }
                return total
            }
            let elapsed = Date().timeIntervalSince(start)
            let batches = stores.reduce(0) { $0 + $1.statistics.batches }
            let revision = try await stores[0].loadSnapshot().revision
            guard revision == UInt64(acknowledged) else {
                print("error: \(acknowledged) acknowledged writes but revision \(revision)")
                exit(1)
            }
            print(String(
                format: "PostgresStore, %d instance(s), %d writers: %7.0f acknowledged durable writes/s (%4.0f transactions/s, %4.1f writes each)",
                instances, writers, Double(acknowledged) / elapsed, Double(batches) / elapsed,
                Double(acknowledged) / Double(max(batches, 1))))
            for store in stores { await store.close() }
        }
    }
}
