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

    func testStringsAreEqualByTheirBytesNotByCanonicalEquivalence() {
        XCTAssertNotEqual(PreferenceValue.string("\u{E9}"), .string("e\u{301}"))   // `==` on String says equal
        XCTAssertEqual(PreferenceValue.string("e\u{301}"), .string("e" + "\u{301}"))
        XCTAssertEqual(PreferenceValue.string(""), .string(""))
        XCTAssertNotEqual(PreferenceValue.string(""), .string("a"))
        // Long values: one differing byte anywhere, and the same bytes in storage not shared.
        let long = String(repeating: "ab", count: 40_000)
        XCTAssertEqual(PreferenceValue.string(long), .string(String(decoding: Array(long.utf8), as: UTF8.self)))
        XCTAssertNotEqual(PreferenceValue.string(long), .string(String(long.dropLast()) + "c"))
        XCTAssertNotEqual(PreferenceValue.string(long), .string("c" + String(long.dropFirst())))
        // A string without contiguous UTF-8 (bridged from NSString) compares the same way.
        let bridged = NSString(string: "caf\u{E9}") as String
        XCTAssertEqual(PreferenceValue.string(bridged), .string("caf\u{E9}"))
        XCTAssertNotEqual(PreferenceValue.string(bridged), .string("cafe\u{301}"))
    }

    func testIntegerRefusesNumbersBeyond64BitsInsteadOfRoundingThem() async throws {
        // Read as floating point, -9223372036854775809 would become Int64.min: a different value.
        XCTAssertNil(try decode("-9223372036854775809").coerced(to: .integer))
        XCTAssertNil(try decode("9223372036854775808").coerced(to: .integer))
        XCTAssertNil(try decode("1e300").coerced(to: .integer))
        XCTAssertEqual(try decode("9007199254740992.0").coerced(to: .integer), .integer(9_007_199_254_740_992))
        XCTAssertEqual(try decode("9223372036854775807").coerced(to: .integer), .integer(Int.max))
    }

    func testIntegerRejectsFractionAndNumberAcceptsInteger() async throws {
        XCTAssertNil(try decode("1.5").coerced(to: .integer))
        XCTAssertEqual(try decode("2").coerced(to: .number), .number(2))
        XCTAssertEqual(try decode("2.0").coerced(to: .integer), .integer(2))
        XCTAssertNil(PreferenceValue.integer(1).coerced(to: .boolean))
        XCTAssertNil(PreferenceValue.string("1").coerced(to: .integer))
    }
}
