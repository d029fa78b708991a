import Foundation
import XCTest
@testable import Observing

/// Idea 3 (typing): values decode as bare JSON and are brought to the declared type.
final class PreferenceValueTests: XCTestCase {
    private func decode(_ json: String) throws -> PreferenceValue {
        try JSONDecoder().decode(PreferenceValue.self, from: Data(json.utf8))
    }

    func testDecodesBareJSONValues() async throws {
        XCTAssertEqual(try decode("true"), .boolean(true))
        XCTAssertEqual(try decode("2"), .integer(2))
        XCTAssertEqual(try decode("1.5"), .number(1.5))
        XCTAssertEqual(try decode("\"fat\""), .string("fat"))
        XCTAssertThrowsError(try decode("[1]"))
    }

    func testEncodesBareJSONValues() async throws {
        let encoded = try JSONEncoder().encode([PreferenceValue.boolean(false), .integer(5), .number(0.5), .string("x")])
        XCTAssertEqual(String(decoding: encoded, as: UTF8.self), #"[false,5,0.5,"x"]"#)
    }

    func testIntegerRejectsFractionAndNumberAcceptsInteger() async throws {
        XCTAssertNil(try decode("1.5").coerced(to: .integer))
        XCTAssertEqual(try decode("2").coerced(to: .number), .number(2))
        XCTAssertEqual(try decode("2.0").coerced(to: .integer), .integer(2))
        XCTAssertNil(PreferenceValue.integer(1).coerced(to: .boolean))
        XCTAssertNil(PreferenceValue.string("1").coerced(to: .integer))
    }
}
