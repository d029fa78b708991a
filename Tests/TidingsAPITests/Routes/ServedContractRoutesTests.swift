import Foundation
import XCTest
import TestFixtures
@testable import TidingsAPI
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
        // Every built-in key has its own paths and exact schema (read as a tree: the emitter's
        // spelling is not the point).
        let contract = try YAMLParser.parse(reply.text)
        let paths = try XCTUnwrap(contract["paths"]), schemas = try XCTUnwrap(contract["components"]?["schemas"])
        for key in PreferenceRoutesTests.builtInKeys {
            XCTAssertNotNil(paths["/preferences/\(key)"], key)
            XCTAssertNotNil(paths["/preferences/\(key)/events"], key)
            XCTAssertNotNil(schemas["PreferenceValue.\(key)"], key)
        }
        XCTAssertNil(paths["/preferences/{key}"])
        XCTAssertEqual(schemas["PreferenceValue.age"], .map([("type", .string("integer")), ("minimum", .integer(Int.min)),
                                                           ("maximum", .integer(Int.max)), ("default", .integer(5))]))
        XCTAssertEqual(schemas["PreferenceValue.speed"], .map([("type", .string("number")), ("default", .number(0))]))
    }

    func test_a_preferences_file_changes_the_served_contract_accordingly() throws {
        let directory = try TemporaryDirectory()
        let serverFile = try directory.file("prefs.json", Self.bounded)
        let server = try InProcessTidings { $0.preferencesFile = serverFile }
        defer { server.stop() }
        let contract = try YAMLParser.parse(server.get("/openapi.yaml").text)
        let paths = try XCTUnwrap(contract["paths"]), schemas = try XCTUnwrap(contract["components"]?["schemas"])
        for key in ["volume", "theme", "ratio", "nickname"] { XCTAssertNotNil(paths["/preferences/\(key)"], key) }
        for key in PreferenceRoutesTests.builtInKeys { XCTAssertNil(paths["/preferences/\(key)"], key) }
        XCTAssertEqual(schemas["PreferenceValue.volume"], .map([
            ("type", .string("integer")), ("minimum", .integer(0)), ("maximum", .integer(11)),
            ("description", .string("Goes to eleven.")), ("default", .integer(5)),
        ]))
        XCTAssertEqual(schemas["PreferenceValue.theme"], .map([
            ("type", .string("string")), ("maxLength", .integer(65536)), ("enum", .strings(["dark", "light"])), ("default", .string("dark")),
        ]))
        XCTAssertEqual(schemas["PreferenceValue.ratio"], .map([
            ("type", .string("number")), ("minimum", .number(0)), ("maximum", .number(1)), ("default", .number(0.5)),
        ]))
        XCTAssertEqual(schemas["PreferenceValue.nickname"], .map([
            ("type", .string("string")), ("maxLength", .integer(12)), ("default", .string("")),
        ]))
        // The PATCH body lists every key, `null` among an enum's values (it resets the key).
        XCTAssertEqual(schemas["PreferencesPatch"]?["properties"]?["theme"], .map([
            ("type", .strings(["string", "null"])), ("maxLength", .integer(65536)),
            ("enum", .sequence([.string("dark"), .string("light"), .null])),
        ]))
        // The OFREP key parameter names the declared keys (a file's keys are declared sorted).
        XCTAssertTrue(Self.nodes(in: contract).contains { $0["enum"] == .strings(["nickname", "ratio", "theme", "volume"]) })
    }

    /// Every node of a tree, depth first.
    private static func nodes(in node: YAMLNode) -> [YAMLNode] {
        switch node {
        case let .mapping(members): [node] + members.flatMap { nodes(in: $0.value) }
        case let .sequence(items): [node] + items.flatMap { nodes(in: $0) }
        default: [node]
        }
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
