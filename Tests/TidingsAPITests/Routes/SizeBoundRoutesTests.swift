import Foundation
import XCTest
import TestFixtures
import TidingsAPI
import TidingsTesting

/// Sizes counted so a client cannot grow them, in-process (see `InProcessTidings`): string
/// preferences without a `maxLength`, and a problem's `errors` list. What is timed (a thing's
/// Unicode work, `/healthz` under a PATCH flood) is `EndToEndTests.SizeBoundTests`, run alone.
final class SizeBoundRoutesTests: XCTestCase {
    func test_a_string_preference_without_maxLength_holds_at_most_65536_scalars() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        XCTAssertEqual(try server.put("name", String(repeating: "n", count: 65_536)).status, 200)
        let problem = assertProblem(try server.put("name", String(repeating: "n", count: 65_537)), 422)
        XCTAssertEqual(problem["errors"]?[0]?["key"], "name")
        assertProblem(try server.request("PATCH", "/preferences", json: ["name": String(repeating: "é", count: 65_537)]), 422)
        XCTAssertEqual(try server.get("/preferences/name").json?["value"] as? String, String(repeating: "n", count: 65_536))
    }

    func test_a_problem_lists_at_most_100_errors() throws {
        var schema: [String: Any] = [:]
        for index in 0..<150 { schema["k\(index)"] = ["type": "integer", "default": 0] }
        let directory = try TemporaryDirectory()
        let file = try directory.file("prefs.json", String(decoding: try JSONSerialization.data(withJSONObject: schema), as: UTF8.self))
        let server = try InProcessTidings { $0.preferencesFile = file }
        defer { server.stop() }
        var patch: [String: Any] = [:]
        for index in 0..<150 { patch["k\(index)"] = "not a number" }
        let problem = assertProblem(try server.request("PATCH", "/preferences", json: patch), 422)
        XCTAssertEqual(problem["errors"]?.arrayValue?.count, 100)
        XCTAssertEqual(problem["detail"], "150 preferences are invalid; nothing was changed.", "all of them counted")
    }
}
