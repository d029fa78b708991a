import Foundation
import XCTest
@testable import TidingsStore
import TestFixtures

final class PostgresMigrationTests: PostgresTestCase {
    private func databaseName(_ url: String) -> String { String(url.split(separator: "/").last!) }

    func testAVersion1DatabaseGetsTheCurrentFunctionsAndKeepsItsData() async throws {
        let url = try makeDatabase()
        let first = try await makeStore(url)
        _ = try await first.commit(StoreWrite([set("k", "1"), .addThing("A")]))
        await first.close()
        // As the first release left it: version 1, without tidings_apply_v1.
        try cluster().psql("UPDATE schema_version SET version = 1; DROP FUNCTION tidings_apply_v1(jsonb, bigint)",
                           database: databaseName(url))

        let migrated = try await makeStore(url)
        let answer = try await migrated.commit(StoreWrite([.addThing("B")]))
        XCTAssertEqual(answer.map(\.event), [Change(revision: 3, kind: .things(op: .add, thing: "B", list: ["A", "B"]))])
        let snapshot = try await migrated.loadSnapshot()
        XCTAssertEqual(snapshot.preferences["k"], StoredPreference(json: "1", revision: 1))
        let version = try cluster().psql("SELECT version FROM schema_version", database: databaseName(url))
        XCTAssertEqual(version.trimmingCharacters(in: .whitespacesAndNewlines), "\(PostgresSchema.version)")
    }

    /// Version 6 made the schedule table at the first schedule call; version 7 makes it with the
    /// schema, because deleting an environment now cancels its pending schedules there.
    func testAVersion6DatabaseWithoutSchedulesCanStillDeleteAnEnvironment() async throws {
        let url = try makeDatabase()
        let first = try await makeStore(url)
        _ = try await first.commit(StoreWrite([.createEnvironment(copiedFrom: nil, limit: 64)], environment: "staging"))
        await first.close()
        try cluster().psql("DROP TABLE schedule; UPDATE schema_version SET version = 6", database: databaseName(url))

        let migrated = try await makeStore(url)
        let deleted = try await migrated.commit(StoreWrite([.deleteEnvironment], environment: "staging"))
        XCTAssertEqual(deleted.map(\.kind), [.environment(.deleted, copiedFrom: nil)])
        let version = try cluster().psql("SELECT version FROM schema_version", database: databaseName(url))
        XCTAssertEqual(version.trimmingCharacters(in: .whitespacesAndNewlines), "\(PostgresSchema.version)")
    }

    /// Version 8 → 9: the batch-of-sets function is created and the commit function that calls
    /// it replaced, so a version-8 database (without `tidings_sets_v1`) commits batches of sets again.
    func testAVersion8DatabaseGetsTheBatchOfSetsPath() async throws {
        let url = try makeDatabase()
        let first = try await makeStore(url)
        _ = try await first.commit(StoreWrite([set("k", "1")]))
        await first.close()
        try cluster().psql("UPDATE schema_version SET version = 8; DROP FUNCTION tidings_sets_v1(jsonb, bigint, bigint)",
                           database: databaseName(url))

        let migrated = try await makeStore(url)
        let answer = try await migrated.commit(StoreWrite([set("k", "2")]))
        XCTAssertEqual(answer.map(\.event), [Change(revision: 2, kind: .preference(key: "k", json: "2"))])
        let version = try cluster().psql("SELECT version FROM schema_version", database: databaseName(url))
        XCTAssertEqual(version.trimmingCharacters(in: .whitespacesAndNewlines), "\(PostgresSchema.version)")
    }

    /// Version 9 → 10: the array call for a batch of plain sets and the upkeep it shares with
    /// the commit function are created, so a version-9 database (without either) commits plain
    /// sets again — and keeps its checkpoints and pruning (a batch crossing revision 1,000).
    func testAVersion9DatabaseGetsTheArrayCallForPlainSets() async throws {
        let url = try makeDatabase()
        let first = try await makeStore(url)
        _ = try await first.commit(StoreWrite([set("k", "1")]))
        await first.close()
        try cluster().psql("""
            UPDATE schema_version SET version = 9;
            DROP FUNCTION tidings_set_batch_v1(text[], text[], boolean[], text[], text[], text[], text[], boolean[],
                                               bigint, bigint, bigint, bigint, bigint, bigint, bigint);
            DROP FUNCTION tidings_upkeep_v1(bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint, bigint)
            """, database: databaseName(url))

        let migrated = try await makeStore(url)
        let answer = try await migrated.commit(StoreWrite([set("k", "2")]))
        XCTAssertEqual(answer.map(\.event), [Change(revision: 2, kind: .preference(key: "k", json: "2"))])
        // One batch from 998 to 1,001 through the array call: the checkpoint at 1,000 is written.
        try cluster().psql("UPDATE meta SET revision = 997", database: databaseName(url))
        let batch = (0..<4).map { StoreWrite([set("k", "\(10 + $0)")]) }
        let results = await migrated.commitGroup(batch, on: migrated.writer)
        XCTAssertEqual(try results.map { try $0.get().map(\.revision) }, [[998], [999], [1000], [1001]])
        let checkpoints = try cluster().psql("SELECT revision FROM checkpoint ORDER BY revision", database: databaseName(url))
        XCTAssertEqual(checkpoints.trimmingCharacters(in: .whitespacesAndNewlines), "1001")
        let version = try cluster().psql("SELECT version FROM schema_version", database: databaseName(url))
        XCTAssertEqual(version.trimmingCharacters(in: .whitespacesAndNewlines), "\(PostgresSchema.version)")
    }

    func testADatabaseFromANewerBuildIsRefused() async throws {
        let url = try makeDatabase()
        let first = try await makeStore(url)
        await first.close()
        try cluster().psql("UPDATE schema_version SET version = 99", database: databaseName(url))
        let store = try PostgresStore(url: url, logger: .testing, options: .testing)
        addTeardownBlock { await store.close() }
        let error = await storeError { try await store.open() }
        guard case let .database(message) = error else { return XCTFail("expected .database, got \(String(describing: error))") }
        XCTAssertEqual(message, "the database schema is version 99, newer than this build knows (\(PostgresSchema.version))")
    }
}
