import Foundation
import XCTest
@testable import TidingsStore
import TestFixtures

/// Two PostgresStore instances on one database, as two Tidings instances would be: what is
/// PostgreSQL's own (NOTIFY, migrating together). The races between instances every store
/// must win are in ``ChangeStoreConformance`` (`+Races`).
final class PostgresTwoInstancesTests: PostgresTestCase {
    func testTheDoorbellRingsForTheOtherInstancesCommit() async throws {
        let url = try makeDatabase()
        let a = try await makeStore(url)
        // No safety-net poll within the test's time: only NOTIFY can ring B's doorbell.
        var quiet = PostgresStoreOptions.testing
        quiet.pollInterval = .seconds(120)
        let b = try await makeStore(url, options: quiet)
        let rings = RingCounter()
        b.watch { rings.ring() }
        // The LISTEN is in place once the watcher rang for its (re)connection.
        await waitUntil("B's watcher to listen") { rings.count > 0 }
        for value in 1...3 {
            let before = rings.count
            let answer = try await a.commit(StoreWrite([set("k", "\(value)")]))
            await waitUntil("B's doorbell after A's commit \(value)", timeout: 5) { rings.count > before }
            let seen = try await b.changes(after: UInt64(value - 1), limit: 10)
            XCTAssertEqual(seen, answer)
        }
    }

    /// An instance's own commits reach it through their answers, so its doorbell stays quiet
    /// for them (it used to ring for every batch, and the instance read back what it had just
    /// applied); another instance's commit still rings it.
    func testTheDoorbellRingsForAnotherInstancesCommitsOnly() async throws {
        let url = try makeDatabase()
        var quiet = PostgresStoreOptions.testing
        quiet.pollInterval = .seconds(120)
        let a = try await makeStore(url, options: quiet)
        let rings = RingCounter()
        a.watch { rings.ring() }
        await waitUntil("A's watcher to listen") { rings.count > 0 }
        let listening = rings.count
        for value in 1...3 {
            _ = try await a.commit(StoreWrite([set("k", "\(value)")]))
        }
        let b = try await makeStore(url, options: quiet)
        _ = try await b.commit(StoreWrite([set("k", "4")]))
        // PostgreSQL sends notifications in commit order: once B's rang, A's three had arrived.
        await waitUntil("A's doorbell after B's commit", timeout: 5) { rings.count > listening }
        try await Task.sleep(for: .milliseconds(200))
        XCTAssertEqual(rings.count - listening, 1, "one ring: B's commit, none for A's own three")
        let applied = try await a.changes(after: 3, limit: 10)
        XCTAssertEqual(applied.map(\.revision), [4])
    }

    func testInstancesStartingTogetherOnAnEmptyDatabaseAllMigrate() async throws {
        let url = try makeDatabase()
        let stores = try (0..<6).map { _ in try PostgresStore(url: url, logger: .testing, options: .testing) }
        for store in stores { addTeardownBlock { await store.close() } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores { group.addTask { try await store.open() } }
            try await group.waitForAll()
        }
        for (index, store) in stores.enumerated() {
            _ = try await store.commit(StoreWrite([set("k\(index)", "1")]))
        }
        let snapshot = try await stores[0].loadSnapshot()
        XCTAssertEqual(snapshot.revision, 6)
        let version = try cluster().psql("SELECT version FROM schema_version", database: String(url.split(separator: "/").last!))
        XCTAssertEqual(version.trimmingCharacters(in: .whitespacesAndNewlines), "\(PostgresSchema.version)")
    }
}
