import Foundation
import TestFixtures
import XCTest
@testable import TidingsStore

/// An upgrade end to end (issue 31, API.md "Environments"): a data directory the release before
/// environments wrote (SQLite schema v5, rows as it wrote them: `EnvironmentStoreTests`) opens in
/// today's server binary, and everything it held is `default`'s — values, things, history,
/// as-of reads — while the revision counter goes on from where it was.
final class EnvironmentUpgradeTests: XCTestCase {
    func testADataDirectoryFromBeforeEnvironmentsServesItsDataAsDefault() throws {
        let directory = makeTemporaryDirectory(self)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try EnvironmentStoreTests.writeDatabaseFromBeforeEnvironments(path: directory.appendingPathComponent(SQLiteStore.fileName).path)
        let server = try TidingsProcess(dataDirectory: directory)
        defer { server.stop() }
        func get(_ target: String) throws -> JSONValue? {
            let reply = try HTTPConnection(port: server.port).request("GET", target)
            XCTAssertEqual(reply.status, 200, "\(target): \(reply.text)")
            return reply.value
        }

        XCTAssertEqual(try get("/preferences/age")?["value"], 7)
        XCTAssertEqual(try get("/preferences/age")?["revision"], 1)
        XCTAssertEqual(try get("/environments/default/preferences/name")?["value"], "x")
        XCTAssertEqual(try get("/things")?["things"]?.strings, ["YOLO"])
        XCTAssertEqual(try get("/environments")?["environments"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["default"])
        let history = try XCTUnwrap(try get("/history?after=0")?["changes"]?.arrayValue)
        XCTAssertEqual(history.compactMap { $0["revision"]?.intValue }, [1, 2, 3])
        XCTAssertEqual(history.compactMap { $0["environment"]?.stringValue }, ["default", "default", "default"])
        XCTAssertEqual(history.compactMap { $0["actor"]?.stringValue }, ["api", "api", "ops"])
        XCTAssertEqual(try get("/environments/default/preferences/age?asOf=2")?["value"], 7)
        XCTAssertEqual(try get("/things?asOf=2")?["things"]?.strings, [])

        // It goes on: an environment and a change take the next revisions.
        let created = try HTTPConnection(port: server.port).request("PUT", "/environments/staging")
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertEqual(created.value?["revision"], 4)
        let put = try HTTPConnection(port: server.port).request("PUT", "/preferences/age", json: ["value": 8])
        XCTAssertEqual(put.value?["revision"], 5)
        XCTAssertEqual(try get("/environments/staging/preferences/age")?["value"], 5)
    }
}
