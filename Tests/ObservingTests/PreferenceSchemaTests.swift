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
                       #"preference "x": unknown type "float" (expected boolean, integer, number, string or object)"#)
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
        XCTAssertEqual(schemaError(#"{"x": {"type": "boolean", "default": false, "defualt": 1}}"#)?.components(separatedBy: " (known: ").first,
                       #"preference "x": unknown field "defualt""#)
        XCTAssertEqual(schemaError(#"[1]"#), "preferences schema: expected a JSON object of preferences, got array")
        XCTAssertEqual(schemaError(#"{"#)?.components(separatedBy: " (").first, "preferences schema: not valid JSON", "then the decoder's own words")
        XCTAssertEqual(schemaError(#"{}"#), "preferences schema: declares no preferences")
    }

    func testObjectDeclarationsAreReadAndTheirValuesChecked() async throws {
        let prefs = try load(#"""
        {"theme": {"type": "object", "default": {"color": "red", "ratio": 1},
                   "properties": {"color": {"type": "string", "enum": ["red", "blue"]},
                                  "ratio": {"type": "number"},
                                  "inner": {"type": "object", "properties": {"on": {"type": "boolean"}}}},
                   "required": ["color"]}}
        """#)
        let declaration = try XCTUnwrap(prefs.declaration(forKey: "theme"))
        XCTAssertEqual(declaration.type, .object)
        XCTAssertEqual(declaration.object?.required, ["color"])
        XCTAssertEqual(declaration.object?.additionalProperties, false)
        // The declared number member is a number even when written whole.
        XCTAssertEqual(declaration.defaultValue, .object(PreferenceObject(["color": .string("red"), "ratio": .number(1)])))
        try prefs.propose(PreferencePatch(values: ["theme": .object(PreferenceObject(["color": .string("blue"), "inner": .object(PreferenceObject(["on": .boolean(true)]))]))]))
        XCTAssertEqual(prefs.value(forKey: "theme"), .object(PreferenceObject(["color": .string("blue"), "inner": .object(PreferenceObject(["on": .boolean(true)]))])))
        XCTAssertThrowsError(try prefs.propose(PreferencePatch(values: ["theme": .object(PreferenceObject(["color": .string("pink")]))]))) { error in
            XCTAssertEqual(String(describing: error), #"theme: property "color" must be one of "red", "blue""#)
        }
        XCTAssertThrowsError(try prefs.propose(PreferencePatch(values: ["theme": .object(PreferenceObject(["color": .string("red"), "inner": .object(PreferenceObject(["off": .boolean(true)]))]))]))) { error in
            XCTAssertEqual(String(describing: error), #"theme: property "inner.off" is not declared (the object has no additionalProperties)"#)
        }
    }

    func testBadObjectDeclarationsNameTheKeyAndTheProblem() async {
        XCTAssertEqual(schemaError(#"{"o": {"type": "object", "default": {"a": 1}}}"#),
                       #"preference "o": default {"a": 1} is invalid: property "a" is not declared (the object has no additionalProperties)"#)
        XCTAssertEqual(schemaError(#"{"o": {"type": "object", "default": {}, "properties": {"a": {"type": "integer"}}, "required": ["a"]}}"#),
                       #"preference "o": default {} is invalid: property "a" is required"#)
        XCTAssertEqual(schemaError(#"{"o": {"type": "object", "default": {}, "required": ["b"]}}"#),
                       #"preference "o": required property "b" is not declared in "properties""#)
        XCTAssertEqual(schemaError(#"{"o": {"type": "object", "default": {}, "properties": {"a": {"type": "colour"}}}}"#),
                       #"preference "o": property "a": unknown type "colour" (expected boolean, integer, number, string or object)"#)
        XCTAssertEqual(schemaError(#"{"o": {"type": "object", "default": {}, "properties": {"a": {"type": "integer", "default": "x"}}}}"#),
                       #"preference "o": property "a": default "x" is not of type integer"#)
        XCTAssertEqual(schemaError(#"{"o": {"type": "object", "default": {}, "additionalProperties": "yes"}}"#),
                       #"preference "o": "additionalProperties" must be true or false"#)
        XCTAssertEqual(schemaError(#"{"o": {"type": "string", "default": "", "properties": {}}}"#),
                       #"preference "o": properties, required and additionalProperties apply only to object preferences, not string"#)
        XCTAssertEqual(schemaError(#"{"o": {"type": "object", "default": "x"}}"#),
                       #"preference "o": default "x" is not of type object"#)
        XCTAssertEqual(schemaError(#"{"o": {"type": "object", "default": {"a": [1]}, "additionalProperties": true}}"#),
                       #"preference "o": default is invalid: property "a": array is not a preference value (expected a boolean, number, string or object)"#)
    }
}
