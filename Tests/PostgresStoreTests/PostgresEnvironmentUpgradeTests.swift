import Foundation
import XCTest
@testable import TidingsStore
import TestFixtures

/// An upgrade end to end on PostgreSQL (issue 31, API.md "Environments"): a database the release
/// before environments left (schema version 5: today's statements without
/// ``PostgresEnvironmentSchema``, rows as that release wrote them) opens in today's server
/// binary, and everything it held is `default`'s — values, things, history, as-of reads — while
/// the revision counter goes on. (SQLite: `TidingsStoreTests.EnvironmentUpgradeTests`.)
final class PostgresEnvironmentUpgradeTests: PostgresTestCase {
    func testADatabaseFromBeforeEnvironmentsServesItsDataAsDefault() throws {
        let url = try makeDatabase()
        let database = String(url.split(separator: "/").last!)
        let version5 = PostgresSchema.fromEmpty.filter { !PostgresEnvironmentSchema.statements.contains($0) }
        for statement in [PostgresSchema.versionTable] + version5 + [
            "INSERT INTO schema_version (id, version) VALUES (1, 5)",
            """
            INSERT INTO preference (key, value, revision) VALUES ('age', '7', 1), ('name', '"x"', 2);
            INSERT INTO thing (text, position) VALUES ('YOLO', 1);
            INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before) VALUES
                (1, 'preference', 'set', 'age', '7', 40, 1800000000000000, 'api', NULL, NULL),
                (2, 'preference', 'set', 'name', '"x"', 43, 1800000001000000, 'api', 'why', NULL),
                (3, 'things', 'add', 'YOLO', '["YOLO"]', 50, 1800000002000000, 'ops', NULL, '[]');
            UPDATE meta SET revision = 3, things_revision = 3, history_bytes = 133, last_at = 1800000002000000;
            """,
        ] {
            try cluster().psql(statement, database: database)
        }

        let server = try TidingsProcess(arguments: ["--database-url", url])
        defer { server.stop() }
        func get(_ target: String) throws -> JSONValue? {
            let reply = try HTTPConnection(port: server.port).request("GET", target)
            XCTAssertEqual(reply.status, 200, "\(target): \(reply.text)")
            return reply.value
        }
        XCTAssertEqual(try get("/preferences/age")?["value"], 7)
        XCTAssertEqual(try get("/environments/default/preferences/name")?["value"], "x")
        XCTAssertEqual(try get("/things")?["things"]?.strings, ["YOLO"])
        XCTAssertEqual(try get("/environments")?["environments"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["default"])
        let history = try XCTUnwrap(try get("/history?after=0")?["changes"]?.arrayValue)
        XCTAssertEqual(history.compactMap { $0["revision"]?.intValue }, [1, 2, 3])
        XCTAssertEqual(history.compactMap { $0["environment"]?.stringValue }, ["default", "default", "default"])
        XCTAssertEqual(history.compactMap { $0["actor"]?.stringValue }, ["api", "api", "ops"])
        XCTAssertEqual(try get("/preferences/age?asOf=2")?["value"], 7)
        XCTAssertEqual(try get("/things?asOf=2")?["things"]?.strings, [])
        let version = try cluster().psql("SELECT version FROM schema_version", database: database)
        XCTAssertEqual(version.trimmingCharacters(in: .whitespacesAndNewlines), "\(PostgresSchema.version)")

        let created = try HTTPConnection(port: server.port).request("PUT", "/environments/staging")
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertEqual(created.value?["revision"], 4)
        XCTAssertEqual(try HTTPConnection(port: server.port).request("PUT", "/preferences/age", json: ["value": 8]).value?["revision"], 5)
        XCTAssertEqual(try get("/environments/staging/preferences/age")?["value"], 5)
    }
}
