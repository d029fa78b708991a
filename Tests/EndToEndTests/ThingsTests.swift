import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// openapi.yaml "Things", what needs the process: normalisation does not follow the process's
/// locale. The routes' rules run in-process (`TidingsAPITests.ThingRoutesTests`).
final class ThingsTests: XCTestCase {
    func test_normalisation_upper_cases_straße_to_STRASSE_locale_independently() throws {
        let turkish = try TidingsProcess(environment: ["LANG": "tr_TR.UTF-8", "LC_ALL": "tr_TR.UTF-8"])
        defer { turkish.stop() }
        XCTAssertEqual(try turkish.post(thing: "straße").value?["thing"], "STRASSE")
        // A Turkish locale must not turn i into İ.
        XCTAssertEqual(try turkish.post(thing: "wifi").value?["thing"], "WIFI")
        XCTAssertEqual(try turkish.get("/things/strasse").value, ["thing": "STRASSE"])
    }
}
