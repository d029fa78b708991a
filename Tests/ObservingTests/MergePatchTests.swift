import Foundation
import XCTest
@testable import Observing

/// JSON merge patch (RFC 7396) as `PATCH /preferences` applies it to an object preference.
@MainActor
final class MergePatchTests: XCTestCase {
    private func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// RFC 7396 Appendix A, the cases whose patch is an object (a preference's patch for an
    /// object key is one; any other value replaces the key's value as a whole).
    func test_the_RFC_7396_examples_with_an_object_patch() async throws {
        let cases: [(target: String, patch: String, result: String)] = [
            (#"{"a":"b"}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
            (#"{"a":"b"}"#, #"{"b":"c"}"#, #"{"a":"b","b":"c"}"#),
            (#"{"a":"b"}"#, #"{"a":null}"#, #"{}"#),
            (#"{"a":"b","b":"c"}"#, #"{"a":null}"#, #"{"b":"c"}"#),
            (#"{"a":["b"]}"#, #"{"a":"c"}"#, #"{"a":"c"}"#),
            (#"{"a":"c"}"#, #"{"a":["b"]}"#, #"{"a":["b"]}"#),
            (#"{"a":{"b":"c"}}"#, #"{"a":{"b":"d","c":null}}"#, #"{"a":{"b":"d"}}"#),
            (#"{"a":[{"b":"c"}]}"#, #"{"a":[1]}"#, #"{"a":[1]}"#),
            (#"{"e":null}"#, #"{"a":1}"#, #"{"e":null,"a":1}"#),
            (#"[1,2]"#, #"{"a":"b","c":null}"#, #"{"a":"b"}"#),
            (#"{}"#, #"{"a":{"bb":{"ccc":null}}}"#, #"{"a":{"bb":{}}}"#),
        ]
        for (target, patch, result) in cases {
            guard case let .object(members) = try json(patch) else { return XCTFail(patch) }
            XCTAssertEqual(try json(target).merging(patch: members), try json(result), "\(target) + \(patch)")
        }
    }

    func test_resolve_merges_object_keys_onto_their_current_value_and_leaves_the_rest_to_validation() async throws {
        let declarations: [PreferenceDeclaration] = [
            PreferenceDeclaration(key: "age", type: .integer, defaultValue: .integer(5)),
            PreferenceDeclaration(key: "theme", type: .object,
                                  defaultValue: .object(PreferenceObject(["color": .string("red"), "size": .integer(3)])),
                                  object: ObjectSchema(properties: [
                                      PropertyDeclaration(name: "color", rules: ValueRules(type: .string)),
                                      PropertyDeclaration(name: "size", rules: ValueRules(type: .integer)),
                                  ], required: ["color"])),
        ]
        let prefs = try Preferences<Never>(declarations: declarations)
        let body = PreferenceMergePatch(["theme": .object(["size": .null]), "age": .null])
        let (patch, merged) = prefs.resolve(body)
        XCTAssertEqual(merged, ["theme"])
        XCTAssertEqual(patch.entries["theme"], .value(.object(PreferenceObject(["color": .string("red")]))))
        XCTAssertEqual(patch.entries["age"], .reset, "a key's null still resets it")
        try prefs.propose(patch)
        XCTAssertEqual(prefs.value(forKey: "theme"), .object(PreferenceObject(["color": .string("red")])))
        // A merge result that does not fit is refused naming the key.
        let (invalid, _) = prefs.resolve(PreferenceMergePatch(["theme": .object(["color": .null])]))
        XCTAssertThrowsError(try prefs.validate(invalid)) { error in
            XCTAssertEqual((error as? PreferenceValidationError)?.issues.map(\.key), ["theme"])
        }
    }
}
