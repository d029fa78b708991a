import Foundation
import TestFixtures
import TidingsTesting
import Observing
import TidingsModel
import XCTest
@testable import TidingsAPI

/// The served contract's `/environments/{env}` family (API.md "Environments") against the
/// router, in-process: every path the contract lists under the prefix is a route that resolves
/// the environment (an unknown one is the 404 naming it), every unprefixed path it does not list
/// there has no route under the prefix, and each of the family's operations says so.
final class EnvironmentContractRoutesTests: XCTestCase {
    private static let methods = ["get", "put", "post", "patch", "delete"]

    /// A concrete path for a template (any value of each parameter: no route looks at it before
    /// the environment).
    private static func concrete(_ template: String, env: String) -> String {
        template.replacingOccurrences(of: "{env}", with: env).replacingOccurrences(of: "{thing}", with: "X")
            .replacingOccurrences(of: "{id}", with: "1").replacingOccurrences(of: "{key}", with: "age")
            .replacingOccurrences(of: "{name}", with: "hook")
    }

    /// The contract `server` serves, as the tree it is emitted from (the text has more flow
    /// collections than `YAMLParser` takes from a client).
    private func served(_ server: InProcessTidings) throws -> [(path: String, item: YAMLNode)] {
        let reply = try server.get("/openapi.yaml")
        XCTAssertEqual(reply.status, 200)
        let tree = MainActor.assumeIsolated { OpenAPIDocument.tree(for: PreferenceDeclaration.declarations(of: BuiltInPreferences())) }
        XCTAssertEqual(YAMLEmitter.document(tree), reply.text)
        guard case let .mapping(paths)? = tree["paths"] else {
            XCTFail("no paths")
            return []
        }
        return paths.map { ($0.key, $0.value) }
    }

    private func operations(_ item: YAMLNode) -> [String] {
        guard case let .mapping(members) = item else { return [] }
        return members.map(\.key).filter(Self.methods.contains)
    }

    func testEveryPathOfTheFamilyIsARouteThatResolvesTheEnvironment() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        let paths = try served(server)
        let family = paths.filter { $0.path.hasPrefix("/environments/{env}/") && $0.path != "/environments/{env}/promote" }
        XCTAssertGreaterThan(family.count, 30)
        for (template, item) in family {
            for method in operations(item) {
                let target = Self.concrete(template, env: "nowhere")
                let reply = try server.request(method.uppercased(), target, headers: ["Content-Type": "application/json"],
                                               body: Array("{}".utf8))
                XCTAssertEqual(reply.status, 404, "\(method) \(target)")
                XCTAssertEqual(reply.value?["detail"], #"There is no environment "nowhere"."#, "\(method) \(target): \(reply.text)")
            }
        }
    }

    func testUnprefixedPathsAreUnderThePrefixExactlyWhenTheContractSaysSo() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        let paths = try served(server)
        let listed = Set(paths.map(\.path))
        var scoped = 0
        for (template, item) in paths where !template.hasPrefix("/environments") && template != "/" {
            let underPrefix = "/environments/{env}" + template
            for method in operations(item) {
                let target = Self.concrete(underPrefix, env: "nowhere")
                let reply = try server.request(method.uppercased(), target, headers: ["Content-Type": "application/json"],
                                               body: Array("{}".utf8))
                if listed.contains(underPrefix) {
                    scoped += 1
                    XCTAssertEqual(reply.value?["detail"], #"There is no environment "nowhere"."#, "\(method) \(target): \(reply.status) \(reply.text)")
                } else {
                    // No route: the router's own 404 (or 405 where another path's route shares the template).
                    XCTAssertNotEqual(reply.value?["detail"], #"There is no environment "nowhere"."#, "\(method) \(target) is routed but not in the contract")
                }
            }
        }
        XCTAssertGreaterThan(scoped, 50)
    }

    func testEachOperationOfTheFamilyTakesTheEnvironmentAndSaysWhatItAnswers() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        let paths = try served(server)
        let byPath = Dictionary(paths.map { ($0.path, $0.item) }, uniquingKeysWith: { first, _ in first })
        var ids = Set<String>()
        for (path, item) in paths {
            for method in operations(item) {
                let operation = try XCTUnwrap(item[method])
                if case let .string(id)? = operation["operationId"] { XCTAssertTrue(ids.insert(id).inserted, "duplicate id \(id)") }
                guard path.hasPrefix("/environments/{env}") else { continue }
                guard case let .sequence(parameters)? = item["parameters"] else { return XCTFail("no parameters: \(path)") }
                XCTAssertEqual(parameters.first, .ref("#/components/parameters/Environment"), path)
                XCTAssertNotNil(operation["responses"]?["403"], "\(method) \(path)")
                // Every one but creating answers 404 for an environment that does not exist.
                XCTAssertEqual(operation["responses"]?["404"] == nil, method == "put" && path == "/environments/{env}", "\(method) \(path)")
                guard path.hasPrefix("/environments/{env}/"), path != "/environments/{env}/promote" else { continue }
                // The same operation as the unprefixed one, but for its id, tag and the answers above.
                let unprefixed = try XCTUnwrap(byPath[String(path.dropFirst("/environments/{env}".count))]?[method], path)
                XCTAssertEqual(operation["operationId"], unprefixed["operationId"].flatMap {
                    if case let .string(id) = $0 { .string("environment." + id) } else { nil }
                }, path)
                XCTAssertEqual(operation["requestBody"], unprefixed["requestBody"], path)
                XCTAssertEqual(operation["responses"]?["200"]?["content"], unprefixed["responses"]?["200"]?["content"], path)
            }
        }
        // A credential limited to some environments is refused on default's paths too, not on the
        // environment-free ones.
        XCTAssertNotNil(byPath["/preferences"]?["get"]?["responses"]?["403"])
        XCTAssertNotNil(byPath["/stream-tickets"]?["post"]?["responses"]?["403"])
        XCTAssertNil(byPath["/environments"]?["get"]?["responses"]?["403"])
        XCTAssertNil(byPath["/metrics"]?["get"]?["responses"]?["403"])
        XCTAssertNil(byPath["/healthz"]?["get"]?["responses"]?["403"])
        // A thing added under an environment is located under it.
        XCTAssertEqual(byPath["/environments/{env}/things"]?["post"]?["responses"]?["201"]?["headers"]?["Location"]?["schema"]?["pattern"],
                       .string("^/environments/[a-z][a-z0-9-]{0,31}/things/[^/]+$"))
    }

    func testAThingAddedUnderAnEnvironmentIsLocatedThereAndItsTicketsNeedItToExist() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
        let added = try server.request("POST", "/environments/staging/things", json: ["thing": "yolo"])
        XCTAssertEqual(added.status, 201, added.text)
        XCTAssertEqual(added.header("Location"), "/environments/staging/things/YOLO")
        XCTAssertEqual(try server.get(try XCTUnwrap(added.header("Location"))).status, 200)
        XCTAssertEqual(try server.get("/things/YOLO").status, 404)

        XCTAssertEqual(try server.request("POST", "/environments/staging/stream-tickets").status, 201)
        let unknown = try server.request("POST", "/environments/nowhere/stream-tickets")
        XCTAssertEqual(unknown.status, 404, unknown.text)
        XCTAssertEqual(unknown.value?["detail"], #"There is no environment "nowhere"."#, unknown.text)
    }

    func testMalformedDryRunAsOfAndReasonAreRefused() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
        let dryRun = try server.request("POST", "/environments/default/promote?dryRun=perhaps", json: ["from": "staging"])
        XCTAssertEqual(dryRun.status, 400, dryRun.text)
        let asOf = try server.request("POST", "/environments/default/promote", json: ["from": "staging", "asOf": "yesterday"])
        XCTAssertEqual(asOf.status, 422, asOf.text)
        let copy = try server.request("PUT", "/environments/dev", json: ["copyFrom": "staging", "asOf": "yesterday"])
        XCTAssertEqual(copy.status, 422, copy.text)
        // A reason the server refuses is refused also where there is nothing to write (schemathesis found it).
        let again = try server.request("PUT", "/environments/staging", headers: ["Tidings-Reason": "\u{84}"])
        XCTAssertEqual(again.status, 422, again.text)
    }
}
