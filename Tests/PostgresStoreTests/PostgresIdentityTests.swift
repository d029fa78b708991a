import Foundation
import XCTest
@testable import TidingsStore
import TestFixtures

/// The PostgreSQL store's identity and change pages: what every instance checks each read of
/// the change table against, to notice a database that is not the history it applied.
final class PostgresIdentityTests: PostgresTestCase {
    private func databaseName(_ url: String) -> String { String(url.split(separator: "/").last!) }

    func testEveryInstanceSeesOneIdentityAndAnotherDatabaseHasAnother() async throws {
        let url = try makeDatabase()
        let a = try await makeStore(url)
        let b = try await makeStore(url)
        let identity = try await a.loadSnapshot().identity
        XCTAssertNotNil(identity)
        let seenByB = try await b.loadSnapshot().identity
        XCTAssertEqual(seenByB, identity)
        let other = try await makeStore(try makeDatabase())
        let otherIdentity = try await other.loadSnapshot().identity
        XCTAssertNotEqual(otherIdentity, identity)
    }

    func testAPageCarriesTheIdentityTheCounterAndTheReadersCommitTime() async throws {
        let store = try await makeStore(try makeDatabase())
        let committed = try await store.commit(StoreWrite([.addThing("A"), .addThing("B"), .addThing("C")]))
        let identity = try await store.loadSnapshot().identity
        let page = try await store.changePage(after: 2, limit: 10)
        XCTAssertEqual(page.identity, identity)
        XCTAssertEqual(page.counter, 3)
        XCTAssertEqual(page.committedAtReaderRevision, committed[1].at, "the commit's own answer says the row's time")
        XCTAssertEqual(page.changes.map(\.revision), [3])
        let ahead = try await store.changePage(after: 7, limit: 10)
        XCTAssertEqual(ahead.counter, 3)
        XCTAssertEqual(ahead.changes, [])
        let error = await storeError { try await store.changes(after: 7, limit: 10) }
        guard case .changesPruned = error else { return XCTFail("expected changesPruned, got \(String(describing: error))") }
    }

    func testADatabaseFromBeforeIdentitiesGetsOneWhenMigratedAndKeepsItsData() async throws {
        let url = try makeDatabase()
        let first = try await makeStore(url)
        _ = try await first.commit(StoreWrite([set("k", "1")]))
        await first.close()
        try cluster().psql("UPDATE schema_version SET version = 3; ALTER TABLE meta DROP COLUMN identity",
                           database: databaseName(url))
        let migrated = try await makeStore(url)
        let snapshot = try await migrated.loadSnapshot()
        XCTAssertNotNil(snapshot.identity)
        XCTAssertEqual(snapshot.preferences["k"], StoredPreference(json: "1", revision: 1))
        XCTAssertEqual(snapshot.revision, 1)
    }
}
