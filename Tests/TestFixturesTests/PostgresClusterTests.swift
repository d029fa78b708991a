import Foundation
import TestFixtures
import XCTest

final class PostgresClusterTests: XCTestCase {
    func testStartsRestartsAndCleansUp() throws {
        let cluster = try PostgresCluster(database: "fixture")
        addTeardownBlock { cluster.destroy() }
        XCTAssertTrue(FixtureProcess.isAccepting(port: cluster.port))
        XCTAssertEqual(try cluster.psql("SELECT current_database()").trimmingCharacters(in: .whitespacesAndNewlines), "fixture")
        try cluster.psql("CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)")

        try cluster.stop()
        XCTAssertFalse(FixtureProcess.isAccepting(port: cluster.port))
        XCTAssertThrowsError(try cluster.psql("SELECT 1"))
        try cluster.start()
        XCTAssertEqual(try cluster.psql("SELECT n FROM kept").trimmingCharacters(in: .whitespacesAndNewlines), "42")
        try cluster.restart(immediate: true)
        XCTAssertEqual(try cluster.psql("SELECT n FROM kept").trimmingCharacters(in: .whitespacesAndNewlines), "42")

        cluster.destroy()
        XCTAssertFalse(FixtureProcess.isAccepting(port: cluster.port))
        XCTAssertFalse(FileManager.default.fileExists(atPath: cluster.root.path))
        cluster.destroy()  // twice is fine
    }
}
