import Foundation
import XCTest
import TestFixtures
import TidingsAPI
import TidingsTesting

/// openapi.yaml "Preferences", one test per rule, in-process (the real application, router and
/// middleware over a real SQLite file; see `InProcessTidings`). What needs the process — a bad
/// `--preferences` file stopping start-up — is `EndToEndTests.PreferencesTests`.
final class PreferenceRoutesTests: XCTestCase {
    private var server: InProcessTidings!

    override func setUpWithError() throws { server = try InProcessTidings() }
    override func tearDown() { server?.stop(); server = nil }

    static let builtInKeys = ["should_show_hello_world", "onboardingCompleted", "promptedForProVersion",
                              "name", "age", "readyForAction", "speed", "numberOfItems"]

    func test_GET_preferences_lists_keys_in_declaration_order() throws {
        let text = try server.get("/preferences").text
        // substring: member order is text, which a parsed JSON object does not keep.
        let positions = Self.builtInKeys.map { key in text.range(of: "\"\(key)\":")?.lowerBound }
        XCTAssertEqual(positions.compactMap { $0 }.count, Self.builtInKeys.count, text)
        XCTAssertEqual(positions.compactMap { $0 }, positions.compactMap { $0 }.sorted(), text)
    }

    static let builtInDefaults: JSONValue = [
        "should_show_hello_world": false, "onboardingCompleted": false, "promptedForProVersion": false,
        "name": "fat", "age": 5, "readyForAction": false, "speed": 0, "numberOfItems": 0,
    ]

    // MARK: GET

    func test_GET_preferences_returns_every_declared_key_with_its_default() throws {
        XCTAssertEqual(assertJSON(try server.get("/preferences")), Self.builtInDefaults)
    }

    func test_GET_preferences_reflects_changes_and_keeps_defaults_of_the_rest() throws {
        XCTAssertEqual(try server.put("name", "lean").status, 200)
        var expected = Self.builtInDefaults.objectValue!
        expected["name"] = "lean"
        XCTAssertEqual(try server.get("/preferences").value, .object(expected))
    }

    func test_GET_preference_returns_key_value_default_type_revision_0_when_never_set_with_ETag() throws {
        let reply = try server.get("/preferences/age")
        XCTAssertEqual(assertJSON(reply), ["key": "age", "value": 5, "default": 5, "type": "integer", "revision": 0])
        XCTAssertEqual(reply.header("ETag"), "\"0\"")
        XCTAssertEqual(try server.get("/preferences/speed").value?["type"], "number")
        XCTAssertEqual(try server.get("/preferences/name").value?["type"], "string")
        XCTAssertEqual(try server.get("/preferences/onboardingCompleted").value?["type"], "boolean")
    }

    func test_GET_preference_with_If_None_Match_of_the_current_revision_is_304() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        let notModified = try server.get("/preferences/age", headers: ["If-None-Match": "\"1\""])
        XCTAssertEqual(notModified.status, 304)
        XCTAssertTrue(notModified.body.isEmpty)
        XCTAssertEqual(notModified.header("ETag"), "\"1\"")
        XCTAssertEqual(try server.get("/preferences/age", headers: ["If-None-Match": "\"0\""]).status, 200)
        XCTAssertEqual(try server.get("/preferences/age", headers: ["If-None-Match": "\"0\", \"1\""]).status, 304)
        XCTAssertEqual(try server.get("/preferences/age", headers: ["If-None-Match": "*"]).status, 304)
        // After a change the old tag no longer matches.
        XCTAssertEqual(try server.put("age", 7).status, 200)
        XCTAssertEqual(try server.get("/preferences/age", headers: ["If-None-Match": "\"1\""]).value?["value"], 7)
    }

    func test_GET_unknown_preference_is_404() throws {
        let problem = assertProblem(try server.get("/preferences/colour"), 404)
        XCTAssertEqual(problem["detail"], "There is no preference 'colour'.")
    }

    // MARK: PUT

    func test_PUT_preference_answers_200_with_the_record_and_its_new_revision() throws {
        let reply = try server.put("name", "lean")
        XCTAssertEqual(assertJSON(reply), ["key": "name", "value": "lean", "default": "fat", "type": "string", "revision": 1])
        XCTAssertEqual(reply.header("ETag"), "\"1\"")
        XCTAssertEqual(try server.get("/preferences/name").value?["value"], "lean")
    }

    func test_PUT_each_type_accepts_its_own_values() throws {
        XCTAssertEqual(try server.put("readyForAction", true).value?["value"], true)
        XCTAssertEqual(try server.put("age", -3).value?["value"], -3)
        XCTAssertEqual(try server.put("speed", 2.75).value?["value"], 2.75)
        XCTAssertEqual(try server.put("name", "ünï 🎉 \"q\"").value?["value"], "ünï 🎉 \"q\"")
        XCTAssertEqual(try server.put("name", "").value?["value"], "")
    }

    func test_PUT_integerPreference_rejects_1_5_with_422_naming_integer() throws {
        let problem = assertProblem(try server.put("age", 1.5), 422)
        XCTAssertEqual(problem["errors"]?[0]?["key"], "age", "\(problem)")
        XCTAssertEqual(problem["errors"]?[0]?["detail"], "expected a value of type integer", "\(problem)")
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 5)
    }

    func test_PUT_numberPreference_accepts_2() throws {
        let reply = try server.put("speed", 2)
        XCTAssertEqual(assertJSON(reply)["value"], 2)
        XCTAssertEqual(try server.get("/preferences").value?["speed"], 2)
    }

    func test_PUT_wrong_type_is_422_naming_the_expected_type() throws {
        let cases: [(String, Any, String)] = [
            ("age", "6", "integer"), ("age", true, "integer"),
            ("speed", "fast", "number"), ("speed", false, "number"),
            ("name", 5, "string"), ("name", true, "string"),
            ("readyForAction", 1, "boolean"), ("readyForAction", "true", "boolean"),
            ("age", NSNull(), "integer"),
        ]
        for (key, value, type) in cases {
            let problem = assertProblem(try server.put(key, value), 422, "\(key)=\(value)")
            XCTAssertEqual(problem["errors"]?[0]?["key"]?.stringValue, key, "\(key)=\(value): \(problem)")
            XCTAssertEqual(problem["errors"]?[0]?["detail"], .string("expected a value of type \(type)"), "\(key)=\(value): \(problem)")
        }
        XCTAssertEqual(try server.currentRevision(), 0)
    }

    func test_PUT_without_value_is_422() throws {
        for body in ["{}", #"{"val": 6}"#] {
            assertProblem(try server.request("PUT", "/preferences/age", contentType: "application/json", text: body), 422, body)
        }
        XCTAssertEqual(try server.currentRevision(), 0)
    }

    func test_PUT_unknown_key_is_404() throws {
        assertProblem(try server.put("colour", "red"), 404)
        XCTAssertEqual(try server.get("/preferences").value, Self.builtInDefaults)
    }

    func test_PUT_with_If_Match_that_is_not_current_is_412_and_nothing_changes() throws {
        XCTAssertEqual(try server.put("age", 6, headers: ["If-Match": "\"0\""]).status, 200)
        let stale = try server.put("age", 7, headers: ["If-Match": "\"0\""])
        assertProblem(stale, 412)
        XCTAssertEqual(stale.header("ETag"), "\"1\"", "a 412 tells the current tag")
        assertProblem(try server.put("age", 7, headers: ["If-Match": "\"nonsense\""]), 412)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 6)
        XCTAssertEqual(try server.currentRevision(), 1)
    }

    func test_PUT_with_If_Match_of_the_current_revision_or_a_wildcard_succeeds() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        XCTAssertEqual(try server.put("age", 7, headers: ["If-Match": "\"1\""]).value?["revision"], 2)
        XCTAssertEqual(try server.put("age", 8, headers: ["If-Match": "\"9\", \"2\""]).value?["revision"], 3)
        XCTAssertEqual(try server.put("age", 9, headers: ["If-Match": "*"]).value?["revision"], 4)
    }

    func test_DELETE_with_If_Match_that_is_not_current_is_412() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        assertProblem(try server.request("DELETE", "/preferences/age", headers: ["If-Match": "\"0\""]), 412)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 6)
    }

    // MARK: DELETE

    func test_DELETE_preference_resets_it_to_its_default_and_answers_the_record() throws {
        XCTAssertEqual(try server.put("name", "lean").status, 200)
        let reply = try server.request("DELETE", "/preferences/name")
        XCTAssertEqual(assertJSON(reply), ["key": "name", "value": "fat", "default": "fat", "type": "string", "revision": 2])
        XCTAssertEqual(reply.header("ETag"), "\"2\"")
        XCTAssertEqual(try server.get("/preferences").value?["name"], "fat")
    }

    func test_DELETE_unknown_preference_is_404() throws {
        assertProblem(try server.request("DELETE", "/preferences/colour"), 404)
    }

    // MARK: PATCH

    func test_PATCH_applies_every_key_atomically_each_changed_key_with_its_own_revision_answering_the_whole_map() throws {
        let stream = try server.openEventStream("/preferences/events")
        _ = try stream.nextEvents(8)
        let reply = try server.request("PATCH", "/preferences", json: ["age": 40, "name": "lean", "readyForAction": true])
        var expected = Self.builtInDefaults.objectValue!
        expected["age"] = 40
        expected["name"] = "lean"
        expected["readyForAction"] = true
        XCTAssertEqual(assertJSON(reply), .object(expected))
        XCTAssertEqual(reply.revisionHeader, 3)

        let events = try stream.nextEvents(3)
        XCTAssertEqual(events.map(\.id), ["1", "2", "3"])
        XCTAssertEqual(Set(events.compactMap { $0.value?["key"]?.stringValue }), ["age", "name", "readyForAction"])
        for event in events {
            let key = try XCTUnwrap(event.value?["key"]?.stringValue)
            let record = try server.get("/preferences/\(key)").value
            XCTAssertEqual(record?["revision"]?.description, event.id)
            XCTAssertEqual(record?["value"], event.value?["value"])
        }
    }

    func test_PATCH_null_resets_a_key_to_its_default() throws {
        XCTAssertEqual(try server.put("age", 30).status, 200)
        let reply = try server.request("PATCH", "/preferences", json: ["age": NSNull(), "speed": 1.25])
        XCTAssertEqual(assertJSON(reply)["age"], 5)
        XCTAssertEqual(reply.value?["speed"], 1.25)
        XCTAssertEqual(try server.get("/preferences/age").value?["revision"], 2)
    }

    func test_PATCH_with_any_unknown_or_invalid_key_is_422_listing_every_bad_key_and_applies_nothing() throws {
        let stream = try server.openEventStream("/preferences/events")
        _ = try stream.nextEvents(8)
        let reply = try server.request("PATCH", "/preferences", json: [
            "age": 1.5, "colour": "red", "name": 5, "readyForAction": "yes", "speed": 3, "numberOfItems": 2,
        ])
        let problem = assertProblem(reply, 422)
        let errors = try XCTUnwrap(problem["errors"]?.arrayValue, "\(problem)")
        XCTAssertEqual(Set(errors.compactMap { $0["key"]?.stringValue }), ["age", "colour", "name", "readyForAction"])
        for error in errors { XCTAssertFalse(error["detail"]?.stringValue?.isEmpty ?? true, "\(error)") }
        let ageError = errors.first { $0["key"] == "age" }
        XCTAssertEqual(ageError?["detail"], "expected a value of type integer")
        XCTAssertEqual(try server.get("/preferences").value, Self.builtInDefaults)
        XCTAssertEqual(try server.currentRevision(), 0)
        // Nothing was announced: the next event is the next change, with the first revision.
        XCTAssertEqual(try server.put("numberOfItems", 1).status, 200)
        let next = try stream.nextEvent()
        XCTAssertEqual(next.id, "1")
        XCTAssertEqual(next.value, ["key": "numberOfItems", "value": 1, "revision": 1])
    }

    func test_PATCH_body_that_is_not_an_object_is_422() throws {
        for body in ["[]", "5", #""age""#, "true"] {
            assertProblem(try server.request("PATCH", "/preferences", contentType: "application/json", text: body), 422, body)
        }
    }

    func test_PATCH_with_an_empty_object_changes_nothing_and_answers_the_map() throws {
        XCTAssertEqual(assertJSON(try server.request("PATCH", "/preferences", json: [String: Any]())), Self.builtInDefaults)
        XCTAssertEqual(try server.currentRevision(), 0)
    }

    // MARK: --preferences FILE

    private static let schema = #"""
    {
      "volume": {"type": "integer", "default": 3, "minimum": 0, "maximum": 10, "description": "Speaker volume"},
      "theme": {"type": "string", "default": "light", "enum": ["light", "dark"]},
      "nick": {"type": "string", "default": "", "maxLength": 4},
      "ratio": {"type": "number", "default": 0.5},
      "beta": {"type": "boolean", "default": false}
    }
    """#

    func test_preferences_file_replaces_the_built_in_set() throws {
        let directory = try TemporaryDirectory()
        let schemaFile = try directory.file("prefs.json", Self.schema)
        let custom = try InProcessTidings { $0.preferencesFile = schemaFile }
        defer { custom.stop() }
        XCTAssertEqual(assertJSON(try custom.get("/preferences")),
                       ["volume": 3, "theme": "light", "nick": "", "ratio": 0.5, "beta": false])
        assertProblem(try custom.get("/preferences/age"), 404)
        assertProblem(try custom.put("age", 6), 404)
        XCTAssertEqual(try custom.get("/preferences/volume").value,
                       ["key": "volume", "value": 3, "default": 3, "type": "integer", "revision": 0])
        XCTAssertEqual(try custom.put("ratio", 2).value?["value"], 2)
    }

    func test_preferences_file_constraints_are_enforced_with_422() throws {
        let directory = try TemporaryDirectory()
        let schemaFile = try directory.file("prefs.json", Self.schema)
        let custom = try InProcessTidings { $0.preferencesFile = schemaFile }
        defer { custom.stop() }
        for (key, value) in [("volume", 11), ("volume", -1)] as [(String, Any)] {
            assertProblem(try custom.put(key, value), 422, "\(key)=\(value)")
        }
        assertProblem(try custom.put("theme", "blue"), 422)
        assertProblem(try custom.put("nick", "abcde"), 422)
        assertProblem(try custom.put("volume", 2.5), 422)
        XCTAssertEqual(try custom.currentRevision(), 0)
        XCTAssertEqual(try custom.put("volume", 10).status, 200)
        XCTAssertEqual(try custom.put("volume", 0).status, 200)
        XCTAssertEqual(try custom.put("theme", "dark").status, 200)
        XCTAssertEqual(try custom.put("nick", "abcd").status, 200)
        let patch = try custom.request("PATCH", "/preferences", json: ["volume": 99, "theme": "blue", "nick": "ok"])
        XCTAssertEqual(Set(assertProblem(patch, 422)["errors"]?.arrayValue?.compactMap { $0["key"]?.stringValue } ?? []),
                       ["volume", "theme"])
    }
}
