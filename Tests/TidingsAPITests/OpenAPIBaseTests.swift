import Observing
import XCTest
@testable import TidingsAPI

/// `Contract/openapi.base.yaml` (embedded in the binary) reads, keeps the caching rule on every
/// operation, and takes the declared preferences where the generator puts them.
final class OpenAPIBaseTests: XCTestCase {
    private static let declarations = [
        PreferenceDeclaration(key: "volume", type: .integer, defaultValue: .integer(5), minimum: 0, maximum: 11),
        PreferenceDeclaration(key: "theme", type: .string, defaultValue: .string("dark"), allowedValues: [.string("dark"), .string("light")]),
        PreferenceDeclaration(key: "a.b", type: .boolean, defaultValue: .boolean(true)),
    ]

    func testTheEmbeddedFileReadsAndRoundTrips() throws {
        let base = try YAMLParser.parse(PackageResources.openapi_base_yaml)
        XCTAssertEqual(base, OpenAPIDocument.base)
        XCTAssertEqual(base["openapi"], .string("3.1.0"))
        XCTAssertEqual(try YAMLParser.parse(YAMLEmitter.document(base)), base)
    }

    /// An operation added to the file without the validators, `304`/`412` or coding headers that
    /// HTTPCaching answers with fails here (the rule changes nothing on a conforming operation).
    func testEveryOperationOfTheFileAlreadyCarriesTheCachingRule() throws {
        guard case let .mapping(paths)? = OpenAPIDocument.base["paths"] else { return XCTFail("no paths") }
        XCTAssertGreaterThan(paths.count, 20)
        for item in paths {
            XCTAssertEqual(OpenAPIContract.applyingCaching(toPathItem: item.value, path: item.key), item.value, item.key)
        }
    }

    func testTheDeclarationsAreMergedInPlace() throws {
        let document = OpenAPIDocument.tree(for: Self.declarations)
        let keys = YAMLNode.strings(["volume", "theme", "a.b"])
        guard case let .mapping(paths)? = document["paths"] else { return XCTFail("no paths") }
        let names = paths.map(\.key)
        let events = try XCTUnwrap(names.firstIndex(of: "/preferences/events"))
        XCTAssertEqual(Array(names[(events + 1)...(events + 9)]), [
            "/preferences/volume", "/preferences/volume/events", "/preferences/volume/history",
            "/preferences/theme", "/preferences/theme/events", "/preferences/theme/history",
            "/preferences/a.b", "/preferences/a.b/events", "/preferences/a.b/history",
        ])
        XCTAssertEqual(names[events + 10], "/things")

        // The per-key history is `/things/history` with its own id and summary.
        let history = document.at(["paths", "/preferences/theme/history", "get"])
        XCTAssertEqual(history["operationId"], .string("getPreferenceHistory.theme"))
        XCTAssertEqual(history.filling(["operationId"], with: .null).filling(["summary"], with: .null),
                       document.at(["paths", "/things/history", "get"]).filling(["operationId"], with: .null).filling(["summary"], with: .null))
        // The per-key record read has what every read has.
        let read = document.at(["paths", "/preferences/volume", "get"])
        XCTAssertNotNil(read.at(["responses", "200", "headers"])["Cache-Control"])
        XCTAssertNotNil(read["responses"]?["304"])
        XCTAssertNotNil(read["responses"]?["410"])

        for path in [["components", "schemas", "PreferenceMap", "required"],
                     ["components", "schemas", "PreferenceDeclarations", "required"],
                     ["components", "schemas", "PreferencesRollback", "properties", "keys", "items", "enum"],
                     ["paths", "/ofrep/v1/evaluate/flags/{key}", "post", "parameters", "0", "schema", "enum"]] {
            XCTAssertEqual(document.at(path), keys, path.joined(separator: " "))
        }
        XCTAssertEqual(document.at(["components", "parameters", "StreamKeys", "schema", "pattern"]),
                       .string(#"^(volume|theme|a\.b)(,(volume|theme|a\.b))*$"#))
        XCTAssertEqual(document.at(["paths", "/preferences", "get", "responses", "200", "content", "application/json", "example"]),
                       .map([("volume", .integer(5)), ("theme", .string("dark")), ("a.b", .boolean(true))]))
        XCTAssertEqual(document.at(["components", "schemas", "PreferencesPatch", "properties", "theme", "enum"]),
                       .sequence([.string("dark"), .string("light"), .null]))

        guard case let .mapping(schemas)? = document["components"]?["schemas"] else { return XCTFail("no schemas") }
        let declared = try XCTUnwrap(schemas.map(\.key).firstIndex(of: "PreferenceDeclarations"))
        XCTAssertEqual(schemas[declared + 1].key, "PreferenceValue.volume")
        XCTAssertEqual(schemas[declared + 1].value, .map([("type", .string("integer")), ("minimum", .integer(0)),
                                                          ("maximum", .integer(11)), ("default", .integer(5))]))
        guard case let .mapping(responses)? = document["components"]?["responses"] else { return XCTFail("no responses") }
        let stream = try XCTUnwrap(responses.map(\.key).firstIndex(of: "EventStream"))
        XCTAssertEqual(responses[(stream + 1)...(stream + 3)].map(\.key), ["EventStream.volume", "EventStream.theme", "EventStream.a.b"])
    }
}
