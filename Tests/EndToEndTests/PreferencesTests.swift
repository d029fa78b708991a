import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// openapi.yaml "Preferences", what needs the process: a bad `--preferences` file stops start-up
/// with a message naming the key, and the server never listens. The routes' rules run in-process
/// (`TidingsAPITests.PreferenceRoutesTests`).
final class PreferencesTests: XCTestCase {
    func test_bad_preferences_file_stops_startup_with_a_message_naming_the_key() throws {
        let directory = try TemporaryDirectory()
        let cases: [(String, String)] = [
            (#"{"fine": {"type": "integer", "default": 1}, "broken": {"type": "integer", "default": "x"}}"#, "broken"),
            (#"{"shade": {"type": "colour", "default": "red"}}"#, "shade"),
            (#"{"limit": {"type": "integer"}}"#, "limit"),
            (#"{"level": {"type": "integer", "default": 20, "maximum": 10}}"#, "level"),
            (#"{"mode": {"type": "string", "default": "a", "enum": ["b", "c"]}}"#, "mode"),
            (#"{"fine": {"type": "integer", "default": 1}, "events": {"type": "integer", "default": 1}}"#, "events"),
            (#"{"two words": {"type": "boolean", "default": false}}"#, "two words"),
            (#"{"a/b": {"type": "boolean", "default": false}}"#, "a/b"),
            (#"{"theme": {"type": "object", "default": {"color": 1}, "properties": {"color": {"type": "string"}}}}"#, "theme"),
            (#"{"look": {"type": "object", "default": {}, "required": ["size"]}}"#, "look"),
        ]
        for (index, (text, key)) in cases.enumerated() {
            let path = try directory.file("bad\(index).json", text)
            XCTAssertThrowsError(try TidingsProcess(arguments: ["--preferences", path], startupTimeout: 10), text) { error in
                guard let start = error as? TidingsProcess.StartError else { return XCTFail("\(error)") }
                XCTAssertNotEqual(start.status, 0, text)
                let message = LogLine.parse(start.log).first { $0.level == "critical" }?.message ?? ""
                let named = message.components(separatedBy: ": ").filter { $0 == "preference \"\(key)\"" }
                XCTAssertEqual(named.count, 1, "message does not name \(key): \(start.log)")
                XCTAssertNil(start.line, "it must not listen")
            }
        }
    }

    func test_unreadable_or_non_JSON_preferences_file_stops_startup() throws {
        let directory = try TemporaryDirectory()
        let notJSON = try directory.file("prefs.json", "age: 5")
        XCTAssertThrowsError(try TidingsProcess(arguments: ["--preferences", notJSON])) { error in
            let message = LogLine.parse((error as? TidingsProcess.StartError)?.log ?? "").first { $0.level == "critical" }?.message
            XCTAssertEqual(message?.components(separatedBy: ": ").first, "invalid --preferences file \(notJSON)", "\(error)")
        }
        let missing = directory.url.appendingPathComponent("missing.json").path
        XCTAssertThrowsError(try TidingsProcess(arguments: ["--preferences", missing])) { error in
            let message = LogLine.parse((error as? TidingsProcess.StartError)?.log ?? "").first { $0.level == "critical" }?.message
            XCTAssertEqual(message?.components(separatedBy: ": ").first, "cannot read --preferences file \(missing)", "\(error)")
        }
    }

    /// An object preference through the real process: a PUT over a socket, the record, the event
    /// on a live stream, an OFREP object flag, and a 422 naming the member.
    func test_an_object_preference_is_written_streamed_and_evaluated_over_sockets() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.file("prefs.json", #"""
            {"theme": {"type": "object", "default": {"color": "red"},
                       "properties": {"color": {"type": "string"}, "size": {"type": "number"}}, "required": ["color"]}}
            """#)
        let server = try TidingsProcess(arguments: ["--preferences", file])
        defer { server.stop() }
        let stream = try server.openEventStream("/preferences/theme/events")
        XCTAssertEqual(try stream.nextEvent().value?["value"], ["color": "red"])
        let put = try server.put("theme", ["color": "blue", "size": 2])
        XCTAssertEqual(put.status, 200, put.text)
        XCTAssertEqual(try stream.nextEvent().value?["value"], ["color": "blue", "size": 2])
        XCTAssertEqual(try server.get("/preferences/theme").value?["value"], ["color": "blue", "size": 2])
        let flag = try server.request("POST", "/ofrep/v1/evaluate/flags/theme", contentType: "application/json", text: "{}")
        XCTAssertEqual(flag.text, #"{"key":"theme","value":{"color":"blue","size":2.0},"reason":"STATIC","variant":"set","metadata":{"revision":1,"type":"object"}}"#)
        let bad = try server.put("theme", ["color": "blue", "size": "big"])
        XCTAssertEqual(bad.status, 422)
        XCTAssertEqual(bad.value?["errors"], [["key": "theme", "detail": #"property "size": expected a value of type number"#]], bad.text)
    }
}
