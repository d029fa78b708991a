import Foundation
import XCTest
import TestFixtures
import TidingsAPI
import TidingsTesting

/// openapi.yaml `GET /openapi.yaml` and `GET /preferences/schema`, in-process (see
/// `InProcessTidings`): the contract and the declarations a server serves follow its
/// declarations, and the repository's openapi.yaml is exactly what the built-in set serves. That a
/// preference named `schema` stops start-up is `EndToEndTests.ServedContractTests`.
final class ServedContractRoutesTests: XCTestCase {
    /// The repository's root, found from this file (Tests/TidingsAPITests/Routes/ServedContractRoutesTests.swift).
    private static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let bounded = """
        {"volume": {"type": "integer", "default": 5, "minimum": 0, "maximum": 11, "description": "Goes to eleven."},
         "theme": {"type": "string", "default": "dark", "enum": ["dark", "light"]},
         "ratio": {"type": "number", "default": 0.5, "minimum": 0, "maximum": 1},
         "nickname": {"type": "string", "default": "", "maxLength": 12}}
        """

    func test_the_repository_openapi_yaml_is_what_the_built_in_set_serves() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        let reply = try server.get("/openapi.yaml")
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.header("Content-Type"), "application/yaml")
        let committed = try String(contentsOf: Self.repository.appendingPathComponent("openapi.yaml"), encoding: .utf8)
        if reply.text != committed {
            // Name the first differing line; scripts/write-openapi.sh regenerates the file.
            let served = reply.text.split(separator: "\n", omittingEmptySubsequences: false)
            let file = committed.split(separator: "\n", omittingEmptySubsequences: false)
            let index = Array(zip(served, file)).firstIndex { $0 != $1 } ?? min(served.count, file.count)
            XCTFail("openapi.yaml differs from GET /openapi.yaml at line \(index + 1): "
                + "served \(served.count > index ? String(served[index]) : "<end>") | "
                + "file \(file.count > index ? String(file[index]) : "<end>"); run scripts/write-openapi.sh")
        }
        // Every built-in key has its own paths and exact schema.
        for key in PreferenceRoutesTests.builtInKeys {
            XCTAssertTrue(reply.text.contains("\n  /preferences/\(key):\n"), key)
            XCTAssertTrue(reply.text.contains("\n  /preferences/\(key)/events:\n"), key)
            XCTAssertTrue(reply.text.contains("\n    PreferenceValue.\(key):"), key)
        }
        XCTAssertFalse(reply.text.contains("\n  /preferences/{key}"))
        XCTAssertTrue(reply.text.contains(
            "    PreferenceValue.age: {type: integer, minimum: -9223372036854775808, maximum: 9223372036854775807, default: 5}\n"))
        XCTAssertTrue(reply.text.contains("    PreferenceValue.speed: {type: number, default: 0.0}\n"))
    }

    func test_a_preferences_file_changes_the_served_contract_accordingly() throws {
        let directory = try TemporaryDirectory()
        let serverFile = try directory.file("prefs.json", Self.bounded)
        let server = try InProcessTidings { $0.preferencesFile = serverFile }
        defer { server.stop() }
        let yaml = try server.get("/openapi.yaml").text
        for key in ["volume", "theme", "ratio", "nickname"] {
            XCTAssertTrue(yaml.contains("\n  /preferences/\(key):\n"), key)
        }
        for key in PreferenceRoutesTests.builtInKeys { XCTAssertFalse(yaml.contains("/preferences/\(key):"), key) }
        XCTAssertTrue(yaml.contains("""
                PreferenceValue.volume:
                  type: integer
                  minimum: 0
                  maximum: 11
                  description: Goes to eleven.
                  default: 5
            """), yaml)
        XCTAssertTrue(yaml.contains("    PreferenceValue.theme:\n      type: string\n      maxLength: 65536\n      enum: [dark, light]\n      default: dark\n"), yaml)
        XCTAssertTrue(yaml.contains("    PreferenceValue.ratio: {type: number, minimum: 0.0, maximum: 1.0, default: 0.5}\n"), yaml)
        XCTAssertTrue(yaml.contains("    PreferenceValue.nickname: {type: string, maxLength: 12, default: \"\"}\n"), yaml)
        // The PATCH body lists every key, `null` among an enum's values (it resets the key).
        XCTAssertTrue(yaml.contains("""
                    theme:
                      type: [string, "null"]
                      maxLength: 65536
                      enum: [dark, light, null]
            """), yaml)
        // The OFREP key parameter names the declared keys (a file's keys are declared sorted).
        XCTAssertTrue(yaml.contains("enum: [nickname, ratio, theme, volume]"), yaml)
    }

    func test_preferences_schema_is_the_declarations_in_the_preferences_file_format() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        let builtIn = try server.get("/preferences/schema")
        XCTAssertEqual(builtIn.status, 200)
        XCTAssertEqual(builtIn.text, #"{"should_show_hello_world":{"type":"boolean","default":false},"#
            + #""onboardingCompleted":{"type":"boolean","default":false},"promptedForProVersion":{"type":"boolean","default":false},"#
            + #""name":{"type":"string","default":"fat"},"age":{"type":"integer","default":5},"#
            + #""readyForAction":{"type":"boolean","default":false},"speed":{"type":"number","default":0.0},"#
            + #""numberOfItems":{"type":"integer","default":0}}"#)

        // The answer is itself a valid --preferences file that declares the same set (a file's
        // keys are declared in sorted order, so compare by value).
        let directory = try TemporaryDirectory()
        let againFile = try directory.file("served.json", builtIn.text)
        let again = try InProcessTidings { $0.preferencesFile = againFile }
        defer { again.stop() }
        XCTAssertEqual(try again.get("/preferences/schema").value, builtIn.value)

        let customFile = try directory.file("prefs.json", Self.bounded)
        let custom = try InProcessTidings { $0.preferencesFile = customFile }
        defer { custom.stop() }
        XCTAssertEqual(try custom.get("/preferences/schema").value, JSONValue.parse(Array(Self.bounded.utf8)))
    }

}
