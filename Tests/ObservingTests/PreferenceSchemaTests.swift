import Foundation
import XCTest
@testable import Observing

/// Idea 3 (discoverable, declared at run time): the `--preferences FILE` format.
@MainActor
final class PreferenceSchemaTests: XCTestCase {
    private func load(_ json: String) throws -> Preferences<Never> {
        try Preferences<Never>(schemaJSON: Data(json.utf8))
    }

    private func schemaError(_ json: String) -> String? {
        do {
            _ = try load(json)
            return nil
        } catch {
            return String(describing: error)
        }
    }

    func testLoadsAValidSchemaWithTheSameValidation() async throws {
        let prefs = try load(#"""
        {"volume": {"type": "integer", "default": 3, "minimum": 0, "maximum": 11, "description": "loudness"},
         "theme": {"type": "string", "default": "dark", "enum": ["dark", "light"]},
         "gain": {"type": "number", "default": 1}}
        """#)
        XCTAssertEqual(prefs.declarations.map(\.key), ["gain", "theme", "volume"])
        XCTAssertEqual(prefs.declaration(forKey: "gain")?.defaultValue, .number(1))
        XCTAssertEqual(prefs.declaration(forKey: "volume")?.description, "loudness")
        XCTAssertThrowsError(try prefs.propose(PreferencePatch(values: ["volume": .integer(12)])))
        XCTAssertThrowsError(try prefs.propose(PreferencePatch(values: ["theme": .string("pink")])))
        try prefs.propose(PreferencePatch(values: ["theme": .string("light")]))
        XCTAssertEqual(prefs.value(forKey: "theme"), .string("light"))
    }

    func testErrorsNameTheKeyAndTheProblem() async {
        XCTAssertEqual(schemaError(#"{"x": {"type": "float", "default": 1}}"#),
                       #"preference "x": unknown type "float" (expected boolean, integer, number or string)"#)
        XCTAssertEqual(schemaError(#"{"x": {"type": "integer", "default": 1.5}}"#),
                       #"preference "x": default 1.5 is not of type integer"#)
        XCTAssertEqual(schemaError(#"{"x": {"type": "integer", "default": 1, "minimum": 5, "maximum": 2}}"#),
                       #"preference "x": minimum 5 is greater than maximum 2"#)
        XCTAssertEqual(schemaError(#"{"x": {"type": "integer", "default": 1, "minimum": 2}}"#),
                       #"preference "x": default 1 is invalid: must be at least 2"#)
        XCTAssertEqual(schemaError(#"{"x": {"type": "string", "default": "abc", "maxLength": 2}}"#),
                       #"preference "x": default "abc" is invalid: must be at most 2 characters long"#)
        XCTAssertEqual(schemaError(#"{"x": {"type": "string", "default": "a", "enum": ["a", 1]}}"#),
                       #"preference "x": enum value 1 is not of type string"#)
        XCTAssertEqual(schemaError(#"{"x": {"type": "boolean"}}"#), #"preference "x": missing "default""#)
        XCTAssertEqual(schemaError(#"{"x": {"type": "boolean", "default": false, "minimum": 1}}"#),
                       #"preference "x": minimum/maximum apply only to integer and number preferences, not boolean"#)
        XCTAssertEqual(schemaError(#"{"x": {"type": "boolean", "default": false, "defualt": 1}}"#)?.hasPrefix(#"preference "x": unknown field "defualt""#), true)
        XCTAssertEqual(schemaError(#"[1]"#), "preferences schema: expected a JSON object of preferences, got array")
        XCTAssertEqual(schemaError(#"{"#)?.hasPrefix("preferences schema: not valid JSON"), true)
        XCTAssertEqual(schemaError(#"{}"#), "preferences schema: declares no preferences")
    }
}
