import Foundation
import XCTest
@testable import TidingsStore
import TestFixtures

/// The PostgreSQL store's identity and change pages: what every instance checks each read of
/// the change table against, to notice a database that is not the history it applied: a database
/// from before identities gets one. (Identity and pages as every store keeps them:
/// ``ChangeStoreConformance/aDatabaseKeepsOneIdentity(_:)``.)
final class PostgresIdentityTests: PostgresTestCase {
    private func databaseName(_ url: String) -> String { String(url.split(separator: "/").last!) }

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
