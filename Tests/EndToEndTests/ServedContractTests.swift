import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// openapi.yaml `GET /preferences/schema`, what needs the process: a preference named `schema`
/// stops start-up. The served contract and declarations are checked in-process
/// (`TidingsAPITests.ServedContractRoutesTests`).
final class ServedContractTests: XCTestCase {
    func test_a_preference_named_schema_stops_startup() throws {
        let directory = try TemporaryDirectory()
        let path = try directory.file("bad.json", #"{"schema": {"type": "integer", "default": 1}}"#)
        XCTAssertThrowsError(try TidingsProcess(arguments: ["--preferences", path], startupTimeout: 10)) { error in
            guard let start = error as? TidingsProcess.StartError else { return XCTFail("\(error)") }
            XCTAssertNotEqual(start.status, 0)
            XCTAssertEqual(LogLine.parse(start.log).filter { $0.level == "critical" }.map(\.message),
                           [#"invalid --preferences file: preference "schema": the name is reserved (GET /preferences/schema describes the declarations)"#],
                           start.log)
        }
    }
}
