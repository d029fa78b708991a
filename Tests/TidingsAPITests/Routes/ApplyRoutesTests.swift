import Foundation
import XCTest
import TestFixtures
@testable import TidingsAPI
import TidingsTesting

/// `GET /export` and `POST /apply` (API.md "Changes as code"), in-process: round trips in JSON
/// and YAML onto a fresh server, a dry run that writes nothing, one bad key that writes none,
/// `If-Match`, prune, and YAML the reader refuses.
final class ApplyRoutesTests: XCTestCase {
    private var server: InProcessTidings!

    override func setUpWithError() throws { server = try InProcessTidings() }
    override func tearDown() { server?.stop(); server = nil }

    /// Values that YAML would read as something else unless written with care.
    private func configure(_ server: InProcessTidings) throws {
        let patch: [String: Any] = ["name": "true", "age": 42, "speed": 2.5, "readyForAction": true]
        XCTAssertEqual(try server.request("PATCH", "/preferences", json: patch).status, 200)
        let things = ["YOLO", "NO", "5", "A: B", "- X", "#TAG", "ÜBER", "", "NULL"].filter { !$0.isEmpty }
        XCTAssertEqual(try server.put(things: things).status, 200)
    }

    private func exported(_ server: InProcessTidings, yaml: Bool = false) throws -> HTTPReply {
        let reply = try server.get("/export", headers: yaml ? ["Accept": "application/yaml"] : [:])
        XCTAssertEqual(reply.status, 200, reply.text)
        return reply
    }

    /// The document without its revision (a fresh server numbers its own).
    private func state(_ server: InProcessTidings) throws -> JSONValue? {
        let value = try exported(server).value
        return .object(["preferences": value?["preferences"] ?? .null, "things": value?["things"] ?? .null])
    }

    func test_export_names_every_preference_the_list_and_the_revision() throws {
        try configure(server)
        let document = try XCTUnwrap(try exported(server).value)
        XCTAssertEqual(document["preferences"]?.objectValue?.count, 8)
        XCTAssertEqual(document["preferences"]?["name"], "true")
        XCTAssertEqual(document["things"]?.strings?.first, "YOLO")
        XCTAssertEqual(document["revision"]?.intValue, Int(try server.currentRevision()))
    }

    func test_a_JSON_export_applied_to_a_fresh_server_gives_the_same_state() throws {
        try configure(server)
        let fresh = try InProcessTidings()
        defer { fresh.stop() }
        let applied = try fresh.request("POST", "/apply", contentType: "application/json", text: try exported(server).text)
        XCTAssertEqual(applied.status, 200, applied.text)
        XCTAssertEqual(try state(fresh), try state(server))
    }

    func test_a_YAML_export_applied_to_a_fresh_server_gives_the_same_state() throws {
        try configure(server)
        let yaml = try exported(server, yaml: true)
        XCTAssertEqual(yaml.header("Content-Type"), "application/yaml")
        XCTAssertEqual(try YAMLParser.parse(yaml.text)["preferences"]?["name"], .string("true"), "a string that reads like a boolean stays one: \(yaml.text)")
        let fresh = try InProcessTidings()
        defer { fresh.stop() }
        let applied = try fresh.request("POST", "/apply", contentType: "application/yaml", text: yaml.text)
        XCTAssertEqual(applied.status, 200, applied.text)
        XCTAssertEqual(try state(fresh), try state(server))
        // And the fresh server's own YAML is the same text but for the revision line.
        let again = try exported(fresh, yaml: true).text
        func withoutRevision(_ text: String) -> String { text.split(separator: "\n").filter { !$0.hasPrefix("revision:") }.joined(separator: "\n") }
        XCTAssertEqual(withoutRevision(again), withoutRevision(yaml.text))
    }

    func test_apply_is_one_write_recorded_with_actor_and_reason_and_names_only_what_changed() throws {
        let reply = try server.request("POST", "/apply", headers: ["Tidings-Reason": "from git"],
                                       json: ["preferences": ["age": 6, "name": "fat"], "things": ["imho"]])
        XCTAssertEqual(reply.status, 200, reply.text)
        let changes = try XCTUnwrap(reply.value?["changes"]?.arrayValue)
        XCTAssertEqual(changes.map { $0["key"]?.stringValue ?? $0["topic"]?.stringValue }, ["age", "things"], "name was already fat")
        XCTAssertEqual(changes.compactMap { $0["reason"]?.stringValue }, ["from git", "from git"])
        XCTAssertEqual(reply.value?["revision"]?.intValue, 2)
        XCTAssertEqual(try server.things(), ["IMHO"])
        // The same document again changes nothing: no revision.
        let again = try server.request("POST", "/apply", json: ["preferences": ["age": 6], "things": ["IMHO"]])
        XCTAssertEqual(again.value?["changes"]?.arrayValue?.count, 0, again.text)
        XCTAssertEqual(try server.currentRevision(), 2)
    }

    func test_a_dry_run_says_what_would_change_and_writes_nothing() throws {
        let reply = try server.request("POST", "/apply?dryRun=true", json: ["preferences": ["age": 7, "speed": 0], "things": ["btw"]])
        XCTAssertEqual(reply.status, 200, reply.text)
        XCTAssertEqual(reply.value, ["changes": [["key": "age", "before": 5, "after": 7]],
                                     "things": ["before": [], "after": ["BTW"]]])
        XCTAssertEqual(try server.currentRevision(), 0)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 5)
    }

    func test_one_bad_key_writes_none_and_every_bad_key_is_named() throws {
        let reply = try server.request("POST", "/apply", json: ["preferences": ["age": 6, "speed": "fast", "nope": 1],
                                                                "things": ["ok", "OK"]])
        XCTAssertEqual(reply.status, 422, reply.text)
        XCTAssertEqual(Set(reply.value?["errors"]?.arrayValue?.compactMap { $0["key"]?.stringValue } ?? []),
                       ["speed", "nope", "things"])
        XCTAssertEqual(try server.currentRevision(), 0)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 5)
    }

    /// `revision` is ignored, but the schema's `minimum: 0` and `integer` still hold: a negative or
    /// fractional one, or one that is no number, is a 422 naming `revision`, in JSON and in YAML.
    func test_a_revision_that_is_not_a_whole_number_from_0_is_a_422_naming_it() throws {
        func refused(_ reply: HTTPReply, _ why: String) {
            XCTAssertEqual(reply.status, 422, "\(why): \(reply.text)")
            XCTAssertEqual(reply.header("Content-Type"), "application/problem+json", why)
            XCTAssertEqual(reply.value?["errors"]?.arrayValue?.compactMap { $0["key"]?.stringValue }, ["revision"], why)
        }
        for revision: Any in [-1, 1.5, "3", [1], Int64.min] {
            refused(try server.request("POST", "/apply", json: ["revision": revision, "preferences": ["age": 6]]), "JSON \(revision)")
        }
        for revision in ["-1", "1.5", "three", "'7'", "[1]"] {
            refused(try server.request("POST", "/apply", contentType: "application/yaml", text: "revision: \(revision)\npreferences:\n  age: 6\n"),
                    "YAML \(revision)")
        }
        XCTAssertEqual(try server.currentRevision(), 0, "nothing was written")
        XCTAssertEqual(try server.request("POST", "/apply", json: ["revision": 0, "preferences": ["age": 6]]).status, 200)
        XCTAssertEqual(try server.request("POST", "/apply", contentType: "application/yaml", text: "revision: 99\npreferences:\n  age: 8\n").status, 200)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 8)
    }

    /// No member of a configuration document is nullable in the contract's schema: `"things": null`
    /// read as "absent" left the list alone where its writer may have meant to empty it
    /// (schemathesis: "schema-violating request accepted").
    func test_a_null_member_is_a_422_naming_it_and_writes_nothing() throws {
        for member in ["preferences", "things", "revision"] {
            var body: [String: Any] = ["preferences": ["age": 6], "things": ["YOLO"]]
            body[member] = NSNull()
            let reply = try server.request("POST", "/apply", json: body)
            XCTAssertEqual(reply.status, 422, "\(member): \(reply.text)")
            XCTAssertEqual(reply.header("Content-Type"), "application/problem+json")
            XCTAssertEqual(reply.value?["errors"]?.arrayValue?.compactMap { $0["key"]?.stringValue }, [member], reply.text)
            let yaml = try server.request("POST", "/apply", contentType: "application/yaml", text: "\(member):\n")
            XCTAssertEqual(yaml.status, 422, "YAML \(member): \(yaml.text)")
        }
        XCTAssertEqual(try server.currentRevision(), 0, "nothing was written")
        XCTAssertEqual(try server.request("POST", "/apply", json: ["things": [String]()]).status, 200, "[] empties the list")
    }

    func test_If_Match_applies_only_at_the_named_global_revision() throws {
        XCTAssertEqual(try server.put("age", 9).status, 200)
        let stale = try server.request("POST", "/apply", headers: ["If-Match": "\"0\""], json: ["preferences": ["age": 1]])
        XCTAssertEqual(stale.status, 412, stale.text)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 9)
        let current = try server.request("POST", "/apply", headers: ["If-Match": "\"1\""], json: ["preferences": ["age": 1]])
        XCTAssertEqual(current.status, 200, current.text)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 1)
    }

    func test_prune_resets_what_the_document_does_not_name_and_without_it_leaves_it() throws {
        XCTAssertEqual(try server.request("PATCH", "/preferences", json: ["age": 9, "name": "x"]).status, 200)
        XCTAssertEqual(try server.request("POST", "/apply", json: ["preferences": ["age": 10]]).status, 200)
        XCTAssertEqual(try server.get("/preferences/name").value?["value"], "x", "not named, not pruned: left alone")
        XCTAssertEqual(try server.put(things: ["a"]).status, 200)
        let pruned = try server.request("POST", "/apply?prune=true", json: ["preferences": ["age": 11]])
        XCTAssertEqual(pruned.status, 200, pruned.text)
        XCTAssertEqual(try server.get("/preferences/name").value?["value"], "fat")
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 11)
        XCTAssertEqual(try server.things(), ["A"], "no things member: the list is left alone")
    }

    func test_export_as_of_a_revision_is_the_state_then() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        XCTAssertEqual(try server.put("age", 7).status, 200)
        let then = try server.get("/export?asOf=1")
        XCTAssertEqual(then.value?["preferences"]?["age"], 6, then.text)
        XCTAssertEqual(then.value?["revision"], 1)
        XCTAssertEqual(try server.get("/export?asOf=99").status, 422)
    }

    func test_YAML_the_reader_refuses_is_a_400_and_a_wrong_member_a_422() throws {
        func apply(_ yaml: String) throws -> HTTPReply { try server.request("POST", "/apply", contentType: "application/yaml", text: yaml) }
        XCTAssertEqual(try apply("preferences: &a {age: 6}\nthings: *a\n").status, 400, "anchors and aliases")
        XCTAssertEqual(try apply(String(repeating: "[", count: 5_000)).status, 400, "nesting")
        XCTAssertEqual(try apply("preferences: {age: 6\n").status, 400, "not YAML")
        XCTAssertEqual(try apply("preferences:\n  age: .inf\n").status, 400, "no such JSON number")
        XCTAssertEqual(try apply("preferencs:\n  age: 6\n").status, 422, "a misspelt member")
        XCTAssertEqual(try apply("preferences:\n  name: no\n  age: 0x10\n").status, 200, "core schema: no is a string, 0x10 an integer")
        XCTAssertEqual(try server.get("/preferences/name").value?["value"], "no")
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 16)
        XCTAssertEqual(try server.currentRevision(), 2)
    }
}
