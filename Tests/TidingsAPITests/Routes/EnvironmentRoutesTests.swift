import Foundation
import TestFixtures
import TidingsAPI
import TidingsTesting
import XCTest

/// Environments in-process (API.md "Environments"): creating, the prefix on every kind of path,
/// isolation of values, things, history and streams, deleting, promoting, the name rule and cap.
/// Several processes and PostgreSQL: `EndToEndTests.EnvironmentClusterTests`.
final class EnvironmentRoutesTests: XCTestCase {
    func testCreateWriteAndReadUnderThePrefix() throws {
        let server = try InProcessTidings()
        defer { server.stop() }

        // Only `default` at first; unknown environments are 404 naming them, on every path.
        let listed = try server.get("/environments")
        XCTAssertEqual(listed.status, 200, listed.text)
        XCTAssertEqual((listed.json?["environments"] as? [[String: Any]])?.map { $0["name"] as? String }, ["default"])
        for path in ["/environments/staging/preferences", "/environments/staging/things", "/environments/staging/history",
                     "/environments/staging/events", "/environments/staging"] {
            let reply = try server.get(path)
            XCTAssertEqual(reply.status, 404, path)
            XCTAssertEqual(reply.value?["detail"], #"There is no environment "staging"."#, reply.text)
        }

        let created = try server.request("PUT", "/environments/staging")
        XCTAssertEqual(created.status, 201, created.text)
        XCTAssertEqual(created.json?["name"] as? String, "staging")
        XCTAssertEqual(created.header("Location"), "/environments/staging")
        // Again: it exists, nothing to do.
        XCTAssertEqual(try server.request("PUT", "/environments/staging", json: [String: Any]()).status, 200)

        // A write in staging does not touch default, and takes the next global revision.
        let before = try server.currentRevision()
        let put = try server.request("PUT", "/environments/staging/preferences/age", json: ["value": 41])
        XCTAssertEqual(put.status, 200, put.text)
        let revision = try XCTUnwrap(put.json?["revision"] as? Int)
        XCTAssertGreaterThan(UInt64(revision), before)
        XCTAssertEqual(put.header("ETag"), "\"\(revision)\"")
        XCTAssertEqual(try server.get("/environments/staging/preferences/age").json?["value"] as? Int, 41)
        XCTAssertEqual(try server.get("/preferences/age").json?["value"] as? Int, 5)
        XCTAssertEqual(try server.get("/environments/default/preferences/age").json?["value"] as? Int, 5)
        XCTAssertEqual(try server.request("POST", "/environments/staging/things", json: ["thing": "yolo"]).status, 201)
        XCTAssertEqual(try server.get("/environments/staging/things").json?["things"] as? [String], ["YOLO"])
        XCTAssertEqual(try server.things(), [])

        // History per environment, records carry it.
        let history = try server.get("/environments/staging/history")
        let records = try XCTUnwrap(history.json?["changes"] as? [[String: Any]])
        XCTAssertEqual(records.count, 2)
        XCTAssertEqual(Set(records.compactMap { $0["environment"] as? String }), ["staging"])
        XCTAssertEqual((try server.get("/history").json?["changes"] as? [[String: Any]])?.count, 0)

        // As-of per environment.
        XCTAssertEqual(try server.request("PUT", "/environments/staging/preferences/age", json: ["value": 42]).status, 200)
        let past = try server.get("/environments/staging/preferences/age?asOf=\(revision)")
        XCTAssertEqual(past.status, 200, past.text)
        XCTAssertEqual(past.json?["value"] as? Int, 41)
        // Rollback per environment.
        let rolled = try server.request("POST", "/environments/staging/preferences/rollback", json: ["revision": revision, "keys": ["age"]])
        XCTAssertEqual(rolled.status, 200, rolled.text)
        XCTAssertEqual(try server.get("/environments/staging/preferences/age").json?["value"] as? Int, 41)
        XCTAssertEqual(try server.get("/preferences/age").json?["value"] as? Int, 5)

        // OFREP under the prefix reads staging, and points at staging's stream.
        let flag = try server.request("POST", "/environments/staging/ofrep/v1/evaluate/flags/age", json: [String: Any]())
        XCTAssertEqual(flag.json?["value"] as? Int, 41)
        let bulk = try server.request("POST", "/environments/staging/ofrep/v1/evaluate/flags", json: [String: Any]())
        XCTAssertEqual(bulk.value?["eventStreams"]?[0]?["endpoint"]?["requestUri"], "/environments/staging/ofrep/v1/events", bulk.text)
    }

    func testNamesCapAndDefault() throws {
        let server = try InProcessTidings { $0.maxEnvironments = 3 }
        defer { server.stop() }
        for bad in ["Staging", "1dev", "a_b", String(repeating: "a", count: 33)] {
            XCTAssertEqual(try server.request("PUT", "/environments/\(bad)").status, 400, bad)
        }
        XCTAssertEqual(try server.request("PUT", "/environments/dev").status, 201)
        XCTAssertEqual(try server.request("PUT", "/environments/qa").status, 201)
        let full = try server.request("PUT", "/environments/staging")
        XCTAssertEqual(full.status, 409, full.text)
        XCTAssertEqual(try server.request("DELETE", "/environments/default").status, 409)
        XCTAssertEqual(try server.request("DELETE", "/environments/nope").status, 404)
        XCTAssertEqual(try server.request("DELETE", "/environments/qa").status, 200)
        XCTAssertEqual(try server.get("/environments/qa/preferences").status, 404)
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
    }

    /// No member of a create or promote body may be `null` (the contract's schema): read as
    /// absent, `{"copyFrom": null}` made an environment of the defaults from a body the schema
    /// calls invalid.
    func testANullMemberIsA422NamingIt() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        for member in ["copyFrom", "asOf"] {
            let reply = try server.request("PUT", "/environments/staging", json: [member: NSNull()])
            XCTAssertEqual(reply.status, 422, "\(member): \(reply.text)")
            XCTAssertTrue(reply.text.contains(member), reply.text)
        }
        XCTAssertEqual(try server.get("/environments/staging").status, 404, "nothing was created")
        XCTAssertEqual(try server.request("PUT", "/environments/staging", json: [String: String]()).status, 201)
        for member in ["from", "keys", "things", "asOf"] {
            var body: [String: Any] = ["from": "default"]
            body[member] = NSNull()
            let reply = try server.request("POST", "/environments/staging/promote", json: body)
            XCTAssertEqual(reply.status, 422, "\(member): \(reply.text)")
            XCTAssertTrue(reply.text.contains(member), reply.text)
        }
        XCTAssertEqual(try server.request("POST", "/environments/staging/promote", json: ["from": "default"]).status, 200)
    }

    func testCopyFromAsOfAndPromote() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        XCTAssertEqual(try server.put("name", "first").status, 200)
        let first = try server.currentRevision()
        XCTAssertEqual(try server.put("name", "second").status, 200)
        XCTAssertEqual(try server.put(things: ["A", "B"]).status, 200)

        let copy = try server.request("PUT", "/environments/staging", json: ["copyFrom": "default"])
        XCTAssertEqual(copy.status, 201, copy.text)
        XCTAssertEqual(copy.json?["copiedFrom"] as? String, "default")
        XCTAssertEqual(try server.get("/environments/staging/preferences/name").json?["value"] as? String, "second")
        XCTAssertEqual(try server.get("/environments/staging/things").json?["things"] as? [String], ["A", "B"])
        let old = try server.request("PUT", "/environments/dev", json: ["copyFrom": "default", "asOf": first])
        XCTAssertEqual(old.status, 201, old.text)
        XCTAssertEqual(try server.get("/environments/dev/preferences/name").json?["value"] as? String, "first")
        XCTAssertEqual(try server.get("/environments/dev/things").json?["things"] as? [String], [])
        XCTAssertEqual(try server.request("PUT", "/environments/qa", json: ["copyFrom": "nope"]).status, 422)

        // Promote dev → default: dry run first, nothing written.
        XCTAssertEqual(try server.request("PUT", "/environments/dev/preferences/age", json: ["value": 9]).status, 200)
        let revision = try server.currentRevision()
        let dry = try server.request("POST", "/environments/default/promote?dryRun=true",
                                     json: ["from": "dev", "keys": ["age", "name"], "things": true])
        XCTAssertEqual(dry.status, 200, dry.text)
        let changes = try XCTUnwrap(dry.json?["changes"] as? [[String: Any]])
        XCTAssertEqual(changes.compactMap { $0["key"] as? String }.sorted(), ["age", "name"])
        XCTAssertEqual((dry.json?["things"] as? [String: Any])?["after"] as? [String], [])
        XCTAssertEqual(try server.currentRevision(), revision)

        // If-Match that is not the global revision: 412, nothing written.
        let stale = try server.request("POST", "/environments/default/promote", headers: ["If-Match": "\"1\""],
                                       json: ["from": "dev", "keys": ["age"]])
        XCTAssertEqual(stale.status, 412, stale.text)
        let real = try server.request("POST", "/environments/default/promote", headers: ["If-Match": "\"\(revision)\""],
                                      json: ["from": "dev", "keys": ["age"]])
        XCTAssertEqual(real.status, 200, real.text)
        XCTAssertEqual(try server.get("/preferences/age").json?["value"] as? Int, 9)
        XCTAssertEqual(try server.get("/preferences/name").json?["value"] as? String, "second")
        let record = try XCTUnwrap((try server.get("/preferences/age/history").json?["changes"] as? [[String: Any]])?.first)
        XCTAssertEqual(record["reason"] as? String, "promote from dev")
        XCTAssertEqual(record["environment"] as? String, "default")
        // Nothing left to change: 200, no revision.
        let after = try server.currentRevision()
        XCTAssertEqual(try server.request("POST", "/environments/default/promote", json: ["from": "dev", "keys": ["age"]]).status, 200)
        XCTAssertEqual(try server.currentRevision(), after)
    }

    func testStreamsAreIsolatedAndDeletionResets() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
        let main = try server.openEventStream("/events?topics=preferences&keys=age")
        let staging = try server.openEventStream("/environments/staging/events?topics=preferences&keys=age")
        XCTAssertEqual(try main.nextEvent().json?["value"] as? Int, 5)
        XCTAssertEqual(try staging.nextEvent().json?["value"] as? Int, 5)

        let put = try server.request("PUT", "/environments/staging/preferences/age", json: ["value": 30])
        let stagingRevision = try XCTUnwrap(put.json?["revision"] as? Int)
        let event = try staging.nextEvent()
        XCTAssertEqual(event.json?["value"] as? Int, 30)
        XCTAssertEqual(event.id, String(stagingRevision))
        XCTAssertEqual(try server.put("age", 7).status, 200)
        // The default stream's next event is default's own change, never staging's.
        let mainEvent = try main.nextEvent()
        XCTAssertEqual(mainEvent.json?["value"] as? Int, 7)

        // Resume in staging after its first event: the next staging change, nothing of default.
        XCTAssertEqual(try server.request("PUT", "/environments/staging/preferences/age", json: ["value": 31]).status, 200)
        let resumed = try server.openEventStream("/environments/staging/preferences/age/events?lastEventId=\(stagingRevision)")
        let replayed = try resumed.nextEvent()
        XCTAssertEqual(replayed.json?["value"] as? Int, 31)

        // Deleting ends its streams with `reset`.
        XCTAssertEqual(try server.request("DELETE", "/environments/staging").status, 200)
        XCTAssertEqual(try staging.nextEvent().json?["value"] as? Int, 31)
        XCTAssertEqual(try staging.nextEvent().name, "reset")
        XCTAssertEqual(try server.get("/environments/staging/preferences/age").status, 404)
        // Created again, it starts from the defaults with no history.
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
        XCTAssertEqual(try server.get("/environments/staging/preferences/age").json?["value"] as? Int, 5)
        XCTAssertEqual((try server.get("/environments/staging/history").json?["changes"] as? [[String: Any]])?.count, 0)
    }

    func testScopedTokens() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tokens-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("tokens.json")
        try Data("""
            [{"name": "stager", "role": "write", "token": "stage-secret-123", "environments": ["staging"]},
             {"name": "admin", "role": "write", "token": "admin-secret-123"}]
            """.utf8).write(to: file)
        let server = try InProcessTidings { $0.tokensFile = file.path; $0.readToken = "reader-secret-123" }
        defer { server.stop() }
        let admin = ["Authorization": "Bearer admin-secret-123"]
        let stager = ["Authorization": "Bearer stage-secret-123"]
        XCTAssertEqual(try server.request("PUT", "/environments/staging", headers: admin).status, 201)
        XCTAssertEqual(try server.request("PUT", "/environments/prod", headers: admin).status, 201)

        XCTAssertEqual(try server.get("/environments/staging/preferences", headers: stager).status, 200)
        XCTAssertEqual(try server.request("PUT", "/environments/staging/preferences/age", headers: stager, json: ["value": 3]).status, 200)
        for path in ["/preferences", "/environments/prod/preferences", "/environments/prod/events",
                     "/environments/default/things", "/history"] {
            XCTAssertEqual(try server.get(path, headers: stager).status, 403, path)
        }
        XCTAssertEqual(try server.request("POST", "/environments/prod/ofrep/v1/evaluate/flags", headers: stager,
                                          json: [String: Any]()).status, 403)
        XCTAssertEqual(try server.request("POST", "/stream-tickets", headers: stager).status, 403)
        XCTAssertEqual(try server.request("PUT", "/environments/dev", headers: stager).status, 403)
        XCTAssertEqual(try server.request("DELETE", "/environments/prod", headers: stager).status, 403)
        XCTAssertEqual(try server.request("POST", "/environments/prod/promote", headers: stager, json: ["from": "staging"]).status, 403)
        XCTAssertEqual(try server.request("POST", "/environments/staging/promote", headers: stager, json: ["from": "prod"]).status, 403)
        // The list shows what it reaches.
        let listed = try server.get("/environments", headers: stager)
        XCTAssertEqual((listed.json?["environments"] as? [[String: Any]])?.map { $0["name"] as? String }, ["staging"])
        // A ticket from a scoped credential opens streams of its environments only.
        let ticket = try XCTUnwrap(try server.request("POST", "/environments/staging/stream-tickets", headers: stager).json?["ticket"] as? String)
        XCTAssertEqual(try server.get("/environments/prod/events?ticket=\(ticket)").status, 403)
        let other = try XCTUnwrap(try server.request("POST", "/environments/staging/stream-tickets", headers: stager).json?["ticket"] as? String)
        let stream = try server.openEventStream("/environments/staging/events?topics=preferences&keys=age&ticket=\(other)")
        XCTAssertEqual(try stream.nextEvent().json?["value"] as? Int, 3)
        // Unscoped credentials reach every environment.
        XCTAssertEqual(try server.get("/environments/prod/preferences", headers: admin).status, 200)
    }
}
