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
        ]
        for (index, (text, key)) in cases.enumerated() {
            let path = try directory.file("bad\(index).json", text)
            XCTAssertThrowsError(try TidingsProcess(arguments: ["--preferences", path], startupTimeout: 10), text) { error in
                guard let start = error as? TidingsProcess.StartError else { return XCTFail("\(error)") }
                XCTAssertNotEqual(start.status, 0, text)
                XCTAssertTrue(start.log.contains(key), "message does not name \(key): \(start.log)")
                XCTAssertNil(start.line, "it must not listen")
            }
        }
    }

    func test_unreadable_or_non_JSON_preferences_file_stops_startup() throws {
        let directory = try TemporaryDirectory()
        let notJSON = try directory.file("prefs.json", "age: 5")
        XCTAssertThrowsError(try TidingsProcess(arguments: ["--preferences", notJSON])) { error in
            XCTAssertTrue("\(error)".contains("prefs.json"), "\(error)")
        }
        let missing = directory.url.appendingPathComponent("missing.json").path
        XCTAssertThrowsError(try TidingsProcess(arguments: ["--preferences", missing])) { error in
            XCTAssertTrue("\(error)".contains("missing.json"), "\(error)")
        }
    }
}
