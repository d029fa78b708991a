import Foundation
import XCTest
import TestFixtures
@testable import TidingsAPI
import TidingsTesting

/// openapi.yaml "Preferences", object preferences (`type: object`), in-process: validated on PUT and
/// PATCH naming the member, stored, streamed, in history with before/after, as-of and rollback,
/// served by OFREP as an object flag, described in the served contract and in
/// `/preferences/schema`, bounded in bytes. A bad object declaration stopping start-up is
/// `EndToEndTests.PreferencesTests`.
final class ObjectPreferenceRoutesTests: XCTestCase {
    private var server: InProcessTidings!
    private var directory: TemporaryDirectory!

    static let declarations = """
        {
          "theme": {
            "type": "object", "description": "Look and feel.",
            "default": {"color": "red", "size": 3, "ratio": 0.5, "layout": {"dense": false}},
            "properties": {
              "color": {"type": "string", "enum": ["red", "blue"]},
              "size": {"type": "integer", "minimum": 1, "maximum": 10},
              "ratio": {"type": "number"},
              "label": {"type": "string", "maxLength": 8, "default": "x"},
              "layout": {"type": "object", "properties": {"dense": {"type": "boolean"}}, "required": ["dense"]}
            },
            "required": ["color"]
          },
          "extras": {"type": "object", "default": {}, "additionalProperties": true},
          "age": {"type": "integer", "default": 5}
        }
        """

    override func setUpWithError() throws {
        directory = try TemporaryDirectory()
        let file = try directory.file("prefs.json", Self.declarations)
        server = try InProcessTidings { $0.preferencesFile = file }
    }

    override func tearDown() { server?.stop(); server = nil; directory = nil }

    private let blue: JSONValue = ["color": "blue", "size": 4, "ratio": 2, "layout": ["dense": true]]

    func test_an_object_preference_is_read_with_its_default_and_type() throws {
        let record = try server.get("/preferences/theme")
        XCTAssertEqual(assertJSON(record), [
            "key": "theme", "type": "object", "revision": 0,
            "value": ["color": "red", "size": 3, "ratio": 0.5, "layout": ["dense": false]],
            "default": ["color": "red", "size": 3, "ratio": 0.5, "layout": ["dense": false]],
        ])
        XCTAssertEqual(try server.get("/preferences").value?["extras"], [:])
    }

    func test_PUT_replaces_the_whole_object_and_GET_stream_and_history_show_it() throws {
        let stream = try server.openEventStream("/preferences/theme/events")
        XCTAssertEqual(try stream.nextEvent().value?["value"]?["color"], "red", "the snapshot")
        let put = try server.put("theme", ["color": "blue", "size": 4, "ratio": 2, "layout": ["dense": true]])
        XCTAssertEqual(assertJSON(put)["value"], blue)
        XCTAssertEqual(put.value?["revision"], 1)
        // The number member keeps its type: `2.0` in the JSON text of the event and the record.
        let event = try stream.nextEvent()
        XCTAssertEqual(event.value?["value"], blue)
        XCTAssertEqual(event.id, "1")
        // A member left out is gone (the whole object is replaced): label had no value anyway,
        // so replace again without `ratio`.
        XCTAssertEqual(try server.put("theme", ["color": "red"]).status, 200)
        XCTAssertEqual(try server.get("/preferences/theme").value?["value"], ["color": "red"])
        let history = try XCTUnwrap(server.get("/preferences/theme/history?after=0").value?["changes"]?.arrayValue)
        XCTAssertEqual(history.count, 2, "\(history)")
        XCTAssertEqual(history.first?["before"], ["color": "red", "size": 3, "ratio": 0.5, "layout": ["dense": false]])
        XCTAssertEqual(history.first?["after"], blue)
        XCTAssertEqual(history.last?["before"], blue)
        XCTAssertEqual(history.last?["after"], ["color": "red"])
        // Setting the value it has changes nothing: same revision, no event.
        XCTAssertEqual(try server.put("theme", ["color": "red"]).value?["revision"], 2)
    }

    func test_a_value_that_does_not_fit_is_422_naming_the_member_and_nothing_changes() throws {
        let cases: [(Any, String)] = [
            (["color": "green"], "color"),
            (["color": "red", "size": 1.5], "size"),
            (["color": "red", "size": 11], "size"),
            (["size": 2], "color"),
            (["color": "red", "shade": 1], "shade"),
            (["color": "red", "layout": [:]], "layout.dense"),
            (["color": "red", "layout": ["dense": "yes"]], "layout.dense"),
            (["color": "red", "label": "too long a label"], "label"),
            (["color": "red", "label": NSNull()], "label"),
            (["color": "red", "label": ["a"]], "label"),
        ]
        for (value, member) in cases {
            let reply = try server.put("theme", value)
            let detail = assertProblem(reply, 422, "\(value)")["errors"]?[0]?["detail"]?.stringValue ?? ""
            XCTAssertEqual(detail.split(separator: "\"").dropFirst().first.map(String.init), member, "\(value): \(reply.text)")
            XCTAssertEqual(detail.split(separator: "\"").first, "property ", "\(value): \(reply.text)")
        }
        for value: Any in ["red", 3, [["color": "red"]]] {
            let reply = try server.put("theme", value)
            XCTAssertEqual(assertProblem(reply, 422)["errors"], [["key": "theme", "detail": "expected a value of type object"]])
        }
        XCTAssertEqual(try server.get("/preferences/theme").value?["revision"], 0)
    }

    func test_PATCH_validates_objects_with_the_other_keys_and_null_resets() throws {
        let bad = try server.request("PATCH", "/preferences", json: ["theme": ["color": 1], "age": "x"])
        XCTAssertEqual(assertProblem(bad, 422)["errors"]?.arrayValue?.compactMap { $0["key"]?.stringValue }.sorted(), ["age", "theme"])
        XCTAssertEqual(try server.get("/preferences/age").value?["revision"], 0, "nothing applied")
        let good = try server.request("PATCH", "/preferences", json: ["theme": ["color": "blue"], "age": 6])
        XCTAssertEqual(assertJSON(good)["theme"], ["color": "blue", "size": 3, "ratio": 0.5, "layout": ["dense": false]])
        XCTAssertEqual(good.value?["age"], 6)
        let reset = try server.request("PATCH", "/preferences", json: ["theme": NSNull()])
        XCTAssertEqual(assertJSON(reset)["theme"], ["color": "red", "size": 3, "ratio": 0.5, "layout": ["dense": false]],
                       "a top-level null resets the whole key to its default")
    }

    /// RFC 7396 one level down: the members a PATCH names are merged into the object's current value.
    func test_PATCH_merges_an_object_a_nested_null_removes_a_member_and_a_nested_object_merges() throws {
        XCTAssertEqual(try server.put("theme", ["color": "blue", "size": 4, "label": "hi", "layout": ["dense": true]]).status, 200)
        let merged = try server.request("PATCH", "/preferences", json: ["theme": ["size": 5, "label": NSNull(), "ratio": 0.25]])
        XCTAssertEqual(assertJSON(merged)["theme"], ["color": "blue", "size": 5, "ratio": 0.25, "layout": ["dense": true]])
        let record = try server.get("/preferences/theme")
        XCTAssertEqual(record.value?["revision"], 2, "one change, one revision")
        let history = try XCTUnwrap(server.get("/preferences/theme/history?after=1").value?["changes"]?.arrayValue)
        XCTAssertEqual(history.map { $0["after"] }, [["color": "blue", "size": 5, "ratio": 0.25, "layout": ["dense": true]]])
        // A nested object merges again; a member left out of it stays.
        let nested = try server.request("PATCH", "/preferences", json: ["theme": ["layout": ["dense": false]]])
        XCTAssertEqual(assertJSON(nested)["theme"]?["layout"], ["dense": false])
        XCTAssertEqual(nested.value?["theme"]?["size"], 5)
        // A merge that changes nothing takes no revision.
        let same = try server.request("PATCH", "/preferences", json: ["theme": ["size": 5, "label": NSNull()]])
        XCTAssertEqual(assertJSON(same)["theme"]?["size"], 5)
        XCTAssertEqual(try server.get("/preferences/theme").value?["revision"], 3)
        // Members nobody declared, when allowed: added, merged, removed.
        XCTAssertEqual(assertJSON(try server.request("PATCH", "/preferences", json: ["extras": ["a": 1, "b": ["c": true]]]))["extras"],
                       ["a": 1, "b": ["c": true]])
        XCTAssertEqual(assertJSON(try server.request("PATCH", "/preferences", json: ["extras": ["a": NSNull(), "b": ["d": 2]]]))["extras"],
                       ["b": ["c": true, "d": 2]])
    }

    /// What a merge leaves is checked against the declaration: 422 naming the key, nothing applied.
    func test_PATCH_whose_merge_result_is_invalid_is_422_naming_the_key_and_applies_nothing() throws {
        let cases: [(Any, String)] = [
            (["color": NSNull()], "the required member removed"),
            (["layout": ["dense": NSNull()]], "a nested required member removed"),
            (["shade": 1], "a member nobody declared"),
            (["size": 11], "out of its member's bounds"),
            (["label": ["a"]], "an array"),
            ("blue", "not an object"),
        ]
        for (value, why) in cases {
            let reply = try server.request("PATCH", "/preferences", json: ["theme": value, "age": 7])
            let problem = assertProblem(reply, 422, why)
            XCTAssertEqual(problem["errors"]?.arrayValue?.map { $0["key"] }, ["theme"], "\(why): \(reply.text)")
        }
        XCTAssertEqual(try server.get("/preferences/theme").value?["revision"], 0, "nothing applied")
        XCTAssertEqual(try server.get("/preferences/age").value?["revision"], 0, "nothing applied, the valid key neither")
    }

    /// The environments' PATCH is the same route, merging onto that environment's value.
    func test_PATCH_in_an_environment_merges_onto_its_own_value() throws {
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
        XCTAssertEqual(try server.put("theme", ["color": "blue", "size": 9]).status, 200)
        let merged = try server.request("PATCH", "/environments/staging/preferences", json: ["theme": ["size": 2]])
        XCTAssertEqual(assertJSON(merged)["theme"], ["color": "red", "size": 2, "ratio": 0.5, "layout": ["dense": false]])
        XCTAssertEqual(try server.get("/preferences/theme").value?["value"], ["color": "blue", "size": 9], "default untouched")
        let refused = try server.request("PATCH", "/environments/staging/preferences", json: ["theme": ["color": NSNull()]])
        XCTAssertEqual(assertProblem(refused, 422)["errors"]?[0]?["key"], "theme")
    }

    func test_additional_properties_take_any_scalar_or_object_when_declared() throws {
        let value: JSONValue = ["a": 1, "b": "two", "c": ["d": true, "e": 2.5]]
        XCTAssertEqual(assertJSON(try server.put("extras", ["a": 1, "b": "two", "c": ["d": true, "e": 2.5]]))["value"], value)
        assertProblem(try server.put("extras", ["a": [1, 2]]), 422)
        assertProblem(try server.put("extras", ["a": NSNull()]), 422)
    }

    func test_an_object_value_is_bounded_in_bytes_and_depth() throws {
        var big: [String: String] = [:]
        for i in 0..<100 { big["k\(i)"] = String(repeating: "x", count: 700) }
        let tooBig = try server.put("extras", big)
        XCTAssertEqual(assertProblem(tooBig, 422)["errors"], [["key": "extras", "detail": "must be at most 65536 bytes as JSON"]])
        var deep: Any = ["leaf": 1]
        for _ in 0..<40 { deep = ["n": deep] }
        let tooDeep = try server.put("extras", deep)
        let path = Array(repeating: "n", count: 32).joined(separator: ".")
        XCTAssertEqual(assertProblem(tooDeep, 422)["errors"],
                       [["key": "extras", "detail": .string("property \"\(path)\" must not nest objects more than 32 deep")]])
        XCTAssertEqual(try server.get("/preferences/extras").value?["revision"], 0)
    }

    func test_as_of_and_rollback_bring_back_a_past_object() throws {
        XCTAssertEqual(try server.put("theme", ["color": "blue", "size": 4, "ratio": 2, "layout": ["dense": true]]).status, 200)  // 1
        XCTAssertEqual(try server.put("theme", ["color": "red", "size": 9]).status, 200)  // 2
        XCTAssertEqual(try server.get("/preferences/theme?asOf=1").value?["value"], blue)
        XCTAssertEqual(try server.get("/preferences?asOf=1").value?["theme"], blue)
        let rollback = try server.request("POST", "/preferences/rollback", json: ["revision": 1, "keys": ["theme"]])
        XCTAssertEqual(rollback.status, 200, rollback.text)
        XCTAssertEqual(try server.get("/preferences/theme").value?["value"], blue)
    }

    func test_OFREP_serves_an_object_flag_with_typed_members() throws {
        XCTAssertEqual(try server.put("theme", ["color": "blue", "size": 4, "ratio": 2, "layout": ["dense": true]]).status, 200)
        let single = try server.request("POST", "/ofrep/v1/evaluate/flags/theme", contentType: "application/json", text: "{}")
        XCTAssertEqual(single.text, #"{"key":"theme","value":{"color":"blue","layout":{"dense":true},"ratio":2.0,"size":4},"#
            + #""reason":"STATIC","variant":"set","metadata":{"revision":1,"type":"object"}}"#)
        let bulk = try server.request("POST", "/ofrep/v1/evaluate/flags", contentType: "application/json", text: "{}")
        let flags = try XCTUnwrap(assertJSON(bulk)["flags"]?.arrayValue)
        XCTAssertEqual(flags.first { $0["key"] == "extras" }?["value"], [:])
        XCTAssertEqual(flags.first { $0["key"] == "extras" }?["metadata"]?["type"], "object")
    }

    func test_the_contract_describes_each_object_key_and_the_schema_round_trips() throws {
        // Read as a tree (the emitter's spelling of flow mappings is not the point).
        let contract = try YAMLParser.parse(server.get("/openapi.yaml").text)
        let schemas = try XCTUnwrap(contract["components"]?["schemas"])
        let theme = try XCTUnwrap(schemas["PreferenceValue.theme"])
        XCTAssertEqual(theme["type"], .string("object"))
        XCTAssertEqual(theme["properties"]?["color"], .map([("type", .string("string")), ("maxLength", .integer(65536)),
                                                           ("enum", .strings(["red", "blue"]))]))
        XCTAssertEqual(theme["required"], .strings(["color"]))
        XCTAssertEqual(theme["additionalProperties"], .boolean(false))
        // A PATCH sends an object key as a merge patch: every member optional and nullable.
        let patchTheme = try XCTUnwrap(schemas["PreferencesPatch"]?["properties"]?["theme"])
        XCTAssertEqual(patchTheme["type"], .strings(["object", "null"]))
        XCTAssertNil(patchTheme["required"], "a merge keeps what the patch leaves out")
        XCTAssertEqual(patchTheme["properties"]?["size"]?["type"], .strings(["integer", "null"]))
        XCTAssertEqual(patchTheme["properties"]?["color"]?["enum"], .sequence([.string("red"), .string("blue"), .null]))
        XCTAssertEqual(patchTheme["properties"]?["layout"]?["properties"]?["dense"]?["type"], .strings(["boolean", "null"]))
        XCTAssertNil(patchTheme["properties"]?["layout"]?["required"])
        XCTAssertEqual(patchTheme["additionalProperties"], .boolean(false))
        let extras = try XCTUnwrap(schemas["PreferenceValue.extras"])
        XCTAssertEqual(extras["type"], .string("object"))
        XCTAssertEqual(extras["properties"], .mapping([]))
        XCTAssertEqual(extras["additionalProperties"], .ref("#/components/schemas/PreferenceValue"))
        let schema = try server.get("/preferences/schema")
        XCTAssertEqual(assertJSON(schema)["theme"]?["properties"]?["layout"]?["required"], ["dense"])
        XCTAssertEqual(schema.value?["extras"]?["additionalProperties"], true)
        XCTAssertEqual(schema.value?["theme"]?["additionalProperties"], false)
        // Fed back as a --preferences file, the schema declares the same set.
        let again = try directory.file("again.json", schema.text)
        let second = try InProcessTidings { $0.preferencesFile = again }
        defer { second.stop() }
        XCTAssertEqual(try second.get("/preferences/schema").text, schema.text)
    }
}
