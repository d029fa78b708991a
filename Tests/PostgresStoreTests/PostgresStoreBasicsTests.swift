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

    /// A write that loses a race at the server (a serialization failure, as a deadlock victim or
    /// a lock timeout would) is refused as `.unavailable`, to be retried — but the server answered:
    /// the store is not counted unreachable, and the next call runs at once on the same
    /// connection. (It used to drop the connection and refuse every call until the watcher's next
    /// probe; a schedule being applied then could not give its claim back either.)
    func testAStatementThatLostARaceDoesNotCountTheDatabaseUnreachable() async throws {
        let url = try makeDatabase()
        let store = try await makeStore(url)
        let database = String(url.split(separator: "/").last!)
        try cluster().psql("""
            CREATE SEQUENCE fault_attempts;
            CREATE FUNCTION fail_first_write() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF nextval('fault_attempts') = 1 THEN
                    RAISE EXCEPTION 'injected: could not serialize access' USING ERRCODE = '40001';
                END IF;
                RETURN NEW;
            END $$;
            CREATE TRIGGER fail_first_write BEFORE INSERT OR UPDATE ON preference
                FOR EACH ROW EXECUTE FUNCTION fail_first_write();
            """, database: database)
        let error = await storeError { try await store.commit(StoreWrite([set("k", "1")])) }
        guard case .unavailable = error else { return XCTFail("expected .unavailable, got \(String(describing: error))") }
        XCTAssertTrue(store.isAvailable, "the server answered")
        let changes = try await store.commit(StoreWrite([set("k", "2")]))
        XCTAssertEqual(changes.map(\.revision), [1], "nothing of the refused write was kept")
        let read = try await store.changes(after: 0, limit: 10)
        XCTAssertEqual(read.map(\.revision), [1])
    }
}
