import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// OFREP's answers are built once per revision and cached on each instance (issue 33): a change
/// written through one instance reaches the other's cached answers with the change itself — once
/// the other serves the new value anywhere, its evaluations serve it too, single and bulk.
final class OFREPAnswersInstancesTests: XCTestCase {
    func test_a_change_on_one_instance_invalidates_the_other_instances_cached_answers() throws {
        let directory = try TemporaryDirectory()
        let writer = try TidingsProcess(dataDirectory: directory.url)
        defer { writer.stop() }
        let reader = try TidingsProcess(dataDirectory: directory.url)
        defer { reader.stop() }
        func single() throws -> JSONValue? {
            try reader.request("POST", "/ofrep/v1/evaluate/flags/age", contentType: "application/json", text: "{}").value
        }
        func bulk() throws -> HTTPReply {
            try reader.request("POST", "/ofrep/v1/evaluate/flags", contentType: "application/json", text: "{}")
        }
        // Cached on the reader before the change.
        XCTAssertEqual(try single()?["value"], 5)
        let before = try bulk()
        XCTAssertEqual(before.status, 200)
        let etag = try XCTUnwrap(before.header("ETag"))

        for value in [6, 7] {
            let put = try writer.put("age", value)
            XCTAssertEqual(put.status, 200, put.text)
            let revision = try XCTUnwrap(put.value?["revision"]?.intValue)
            // Wait until the reader has applied the change (its record shows it) ...
            XCTAssertTrue(try eventually(within: 10) { try reader.get("/preferences/age").value?["revision"]?.intValue == revision })
            // ... then its cached answers must show it on the next request.
            XCTAssertEqual(try single()?["value"], JSONValue(integerLiteral: value))
            XCTAssertEqual(try single()?["metadata"]?["revision"], JSONValue(integerLiteral: revision))
            let after = try bulk()
            XCTAssertEqual(after.header("ETag"), "\"\(revision)\"")
            XCTAssertEqual(after.value?["flags"]?.arrayValue?.first { $0["key"] == "age" }?["value"], JSONValue(integerLiteral: value))
            XCTAssertEqual(try reader.request("POST", "/ofrep/v1/evaluate/flags", contentType: "application/json", text: "{}",
                                              headers: ["If-None-Match": etag]).status, 200)
        }
    }
}
