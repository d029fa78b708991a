import Foundation
import XCTest
@testable import TidingsStore
import TestFixtures

/// One PostgresStore: what is PostgreSQL's own (its byte count in `meta`). What every store
/// does (text PostgreSQL cannot hold included: no store takes it) is checked by
/// ``PostgresConformanceTests``.
final class PostgresStoreBasicsTests: PostgresTestCase {
    /// The running byte count the commit function keeps in `meta` (what pruning by bytes
    /// compares) goes back to 0 once a change bigger than the whole budget pruned every row.
    /// (Pruning as every store does it: ``ChangeStoreConformance/pruningByCountAndBytes(_:)``.)
    func testTheRunningByteCountFollowsPruning() async throws {
        let url = try makeDatabase()
        let store = try await makeStore(url, limits: ChangeStoreLimits(historyCount: 1000, historyBytes: 39 * 3 + 10))
        for value in 100...107 { _ = try await store.commit(StoreWrite([set("k", "\(value)")])) }
        let database = String(url.split(separator: "/").last!)
        var running = try cluster().psql("SELECT history_bytes FROM meta", database: database)
        XCTAssertEqual(running.trimmingCharacters(in: .whitespacesAndNewlines), "117", "three rows of 39 bytes kept")
        _ = try await store.commit(StoreWrite([.setPosts(String(repeating: "x", count: 500))]))
        let error = await storeError { try await store.changes(after: 8, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 10))
        running = try cluster().psql("SELECT history_bytes FROM meta", database: database)
        XCTAssertEqual(running.trimmingCharacters(in: .whitespacesAndNewlines), "0")
    }
}
