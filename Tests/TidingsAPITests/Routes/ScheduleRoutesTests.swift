import Foundation
import XCTest
import TestFixtures
import TidingsAPI
import TidingsTesting

/// Schedules (API.md "Changes as code"), in-process over a real SQLite file: applied on time as
/// one ordinary write seen on a stream, cancelled, failing when a later declaration no longer
/// allows the value, and due while the server was down, applied late at start. Several
/// instances on PostgreSQL: `EndToEndTests.ScheduleInstancesTests`.
final class ScheduleRoutesTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory = nil }

    private func server(_ configure: (inout TidingsConfiguration) -> Void = { _ in }) throws -> InProcessTidings {
        try InProcessTidings(dataDirectory: directory.url.appendingPathComponent("data"), configure)
    }

    private static func time(_ seconds: Double) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date().addingTimeInterval(seconds))
    }

    private func schedule(_ server: InProcessTidings, in seconds: Double, _ body: [String: Any]) throws -> (id: String, at: String) {
        let at = Self.time(seconds)
        var json = body
        json["at"] = at
        let reply = try server.request("POST", "/schedules", json: json)
        XCTAssertEqual(reply.status, 201, reply.text)
        XCTAssertEqual(reply.value?["state"], "pending")
        let id = try XCTUnwrap(reply.value?["id"]?.stringValue)
        XCTAssertEqual(reply.header("Location"), "/schedules/\(id)")
        return (id, at)
    }

    private func record(_ server: InProcessTidings, _ id: String) throws -> JSONValue? {
        try server.get("/schedules/\(id)").value
    }

    func test_a_schedule_is_applied_on_time_as_one_write_and_its_event_reaches_a_stream() throws {
        let server = try server()
        defer { server.stop() }
        let stream = try server.openEventStream("/preferences/age/events")
        XCTAssertEqual(try stream.nextEvent().value?["value"], 5, "the snapshot")
        let (id, at) = try schedule(server, in: 1.2, ["preferences": ["age": 8, "name": "later"], "things": ["eta"]])
        let event = try stream.nextEvent(timeout: 5)
        XCTAssertEqual(event.value?["value"], 8)
        XCTAssertTrue(try server.wait { try self.record(server, id)?["state"] == "applied" })
        let applied = try XCTUnwrap(try record(server, id))
        XCTAssertEqual(applied["late"], false)
        XCTAssertEqual(applied["revision"]?.intValue, 3)
        // One write: three records, one `at`, the creator as actor, `scheduled <id>` as reason,
        // within a second of the time asked for.
        let history = try XCTUnwrap(try server.get("/history").value?["changes"]?.arrayValue)
        XCTAssertEqual(history.count, 3)
        XCTAssertEqual(Set(history.compactMap { $0["reason"]?.stringValue }), ["scheduled \(id)"])
        XCTAssertEqual(Set(history.compactMap { $0["actor"]?.stringValue }), ["anonymous"])
        XCTAssertEqual(Set(history.compactMap { $0["at"]?.stringValue }).count, 1)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let due = try XCTUnwrap(formatter.date(from: at))
        let committed = try XCTUnwrap(history.first?["at"]?.stringValue.flatMap { formatter.date(from: $0) })
        XCTAssertLessThan(committed.timeIntervalSince(due), 1.0)
        XCTAssertGreaterThanOrEqual(committed.timeIntervalSince(due), 0)
        XCTAssertEqual(try server.things(), ["ETA"])
    }

    func test_a_cancelled_schedule_is_not_applied_and_cannot_be_cancelled_twice() throws {
        let server = try server()
        defer { server.stop() }
        let (id, _) = try schedule(server, in: 1, ["preferences": ["age": 9], "reason": "canary"])
        let cancelled = try server.request("DELETE", "/schedules/\(id)")
        XCTAssertEqual(cancelled.status, 200, cancelled.text)
        XCTAssertEqual(cancelled.value?["state"], "cancelled")
        XCTAssertEqual(try server.request("DELETE", "/schedules/\(id)").status, 409)
        XCTAssertEqual(try server.request("DELETE", "/schedules/0123456789abcdef").status, 404)
        XCTAssertFalse(try server.wait(timeout: 2) { try server.currentRevision() > 0 }, "nothing was applied")
        XCTAssertEqual(try server.get("/schedules?state=cancelled").value?["schedules"]?.arrayValue?.count, 1)
        XCTAssertEqual(try server.get("/schedules?state=pending").value?["schedules"]?.arrayValue?.count, 0)
    }

    func test_a_schedule_is_checked_when_it_is_made() throws {
        let server = try server()
        defer { server.stop() }
        func post(_ body: [String: Any]) throws -> HTTPReply { try server.request("POST", "/schedules", json: body) }
        XCTAssertEqual(try post(["at": Self.time(-5), "preferences": ["age": 1]]).status, 422, "in the past")
        XCTAssertEqual(try post(["at": Self.time(367 * 86_400), "preferences": ["age": 1]]).status, 422, "more than a year ahead")
        XCTAssertEqual(try post(["at": "tomorrow", "preferences": ["age": 1]]).status, 422)
        let bad = try post(["at": Self.time(60), "preferences": ["age": "old", "nope": 1]])
        XCTAssertEqual(bad.status, 422)
        XCTAssertEqual(Set(bad.value?["errors"]?.arrayValue?.compactMap { $0["key"]?.stringValue } ?? []), ["age", "nope"])
        XCTAssertEqual(try post(["at": Self.time(60)]).status, 422, "nothing to apply")
        XCTAssertEqual(try post(["at": Self.time(60), "rollback": 5]).status, 422, "a revision from the future")
        // Only `rollback` may be null (the contract's schema): any other null member is named.
        for member in ["at", "preferences", "things", "reason"] {
            var body: [String: Any] = ["at": Self.time(60), "things": ["YOLO"], "reason": "why"]
            body[member] = NSNull()
            let null = try post(body)
            XCTAssertEqual(null.status, 422, "\(member): \(null.text)")
            XCTAssertEqual(null.value?["errors"]?.arrayValue?.compactMap { $0["key"]?.stringValue }, [member], null.text)
        }
        XCTAssertEqual(try server.get("/schedules").value?["schedules"]?.arrayValue?.count, 0)
        XCTAssertEqual(try post(["at": Self.time(60), "things": ["YOLO"], "rollback": NSNull()]).status, 201, "a null rollback is none")
    }

    func test_due_while_the_server_was_down_it_is_applied_late_at_start_and_checked_again() throws {
        var server = try self.server()
        let (applies, _) = try schedule(server, in: 1, ["preferences": ["age": 9]])
        let (fails, _) = try schedule(server, in: 1, ["preferences": ["speed": 50]])
        server.stop()
        Thread.sleep(forTimeInterval: 1.5)
        // Back with a declaration that no longer allows speed 50.
        let schema = try directory.file("preferences.json", """
            {"age": {"type": "integer", "default": 5}, "speed": {"type": "number", "default": 0, "maximum": 10}}
            """)
        server = try self.server { $0.preferencesFile = schema }
        defer { server.stop() }
        XCTAssertTrue(try server.wait { try self.record(server, applies)?["state"] == "applied" })
        XCTAssertEqual(try record(server, applies)?["late"], true)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 9)
        XCTAssertTrue(try server.wait { try self.record(server, fails)?["state"] == "failed" })
        let failed = try XCTUnwrap(try record(server, fails))
        // The problem's detail, then each key it names (`key: detail`).
        XCTAssertEqual(failed["detail"]?.stringValue, "'speed': must be at most 10; nothing was changed.", "\(failed)")
        XCTAssertEqual(try server.get("/preferences/speed").value?["value"], 0)
    }

    func test_schedules_belong_to_an_environment_and_apply_there() throws {
        let server = try server()
        defer { server.stop() }
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
        let at = Self.time(1.2)
        let made = try server.request("POST", "/environments/staging/schedules",
                                      json: ["at": at, "preferences": ["age": 8], "things": ["eta"]])
        XCTAssertEqual(made.status, 201, made.text)
        let id = try XCTUnwrap(made.value?["id"]?.stringValue)
        XCTAssertEqual(made.value?["environment"], "staging")
        XCTAssertEqual(made.header("Location"), "/environments/staging/schedules/\(id)")
        // Listed, read and cancellable only in its own environment.
        XCTAssertEqual(try server.get("/environments/staging/schedules").value?["schedules"]?.arrayValue?.map { $0["id"] },
                       [JSONValue.string(id)])
        XCTAssertEqual(try server.get("/schedules").value?["schedules"]?.arrayValue?.count, 0)
        XCTAssertEqual(try server.get("/environments/default/schedules").value?["schedules"]?.arrayValue?.count, 0)
        XCTAssertEqual(try server.get("/schedules/\(id)").status, 404)
        XCTAssertEqual(try server.request("DELETE", "/schedules/\(id)").status, 404)
        XCTAssertEqual(try server.get("/environments/nowhere/schedules").status, 404)

        // Applied in staging as one ordinary write there; default is untouched.
        XCTAssertTrue(try server.wait { try server.get("/environments/staging/schedules/\(id)").value?["state"] == "applied" })
        XCTAssertEqual(try server.get("/environments/staging/preferences/age").value?["value"], 8)
        XCTAssertEqual(try server.get("/environments/staging/things").value?["things"], ["ETA"])
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 5)
        let history = try XCTUnwrap(try server.get("/environments/staging/history").value?["changes"]?.arrayValue)
        XCTAssertEqual(history.count, 2)
        XCTAssertEqual(Set(history.compactMap { $0["reason"]?.stringValue }), ["scheduled \(id)"])
        XCTAssertEqual(Set(history.compactMap { $0["environment"]?.stringValue }), ["staging"])
        let applied = try XCTUnwrap(try server.get("/environments/staging/schedules/\(id)").value)
        XCTAssertEqual(applied["revision"]?.intValue, history.first?["revision"]?.intValue)
    }

    func test_a_credential_scoped_to_an_environment_reaches_only_its_schedules() throws {
        let file = try directory.file("tokens.json", """
            [{"name": "stager", "role": "write", "token": "stage-secret-123", "environments": ["staging"]},
             {"name": "admin", "role": "write", "token": "admin-secret-123"}]
            """)
        let server = try server { $0.tokensFile = file }
        defer { server.stop() }
        let admin = ["Authorization": "Bearer admin-secret-123"]
        let stager = ["Authorization": "Bearer stage-secret-123"]
        XCTAssertEqual(try server.request("PUT", "/environments/staging", headers: admin).status, 201)
        let body: [String: Any] = ["at": Self.time(600), "preferences": ["age": 2]]
        XCTAssertEqual(try server.request("POST", "/schedules", headers: stager, json: body).status, 403)
        XCTAssertEqual(try server.request("POST", "/environments/default/schedules", headers: stager, json: body).status, 403)
        XCTAssertEqual(try server.get("/schedules", headers: stager).status, 403)
        let made = try server.request("POST", "/environments/staging/schedules", headers: stager, json: body)
        XCTAssertEqual(made.status, 201, made.text)
        XCTAssertEqual(made.value?["createdBy"], "stager")
        let id = try XCTUnwrap(made.value?["id"]?.stringValue)
        XCTAssertEqual(try server.get("/environments/staging/schedules/\(id)", headers: stager).status, 200)
        XCTAssertEqual(try server.request("DELETE", "/environments/staging/schedules/\(id)", headers: stager).status, 200)
    }

    func test_the_list_comes_in_pages_by_time() throws {
        let server = try server()
        defer { server.stop() }
        var made: [String] = []
        for minutes in [50.0, 10, 30, 20, 40] {
            made.append(try schedule(server, in: minutes * 60, ["preferences": ["age": Int(minutes)]]).id)
        }
        let byTime = [made[1], made[3], made[2], made[4], made[0]]
        var seen: [String] = []
        var target: String? = "/schedules?limit=2"
        var pages = 0
        while let next = target {
            let page = try server.get(next)
            XCTAssertEqual(page.status, 200, page.text)
            seen += page.value?["schedules"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            target = page.value?["next"]?.stringValue
            if let target { XCTAssertEqual(page.header("Link"), "<\(target)>; rel=\"next\"") }
            pages += 1
            XCTAssertLessThan(pages, 5)
        }
        XCTAssertEqual(pages, 3)
        XCTAssertEqual(seen, byTime)
        XCTAssertEqual(try server.get("/schedules?state=pending&limit=5").value?["next"], .null)
        for bad in ["x", "12-zz", "9999999999999999999-0123456789abcdef", "-0123456789abcdef"] {
            XCTAssertEqual(try server.get("/schedules?after=\(bad)").status, 400, bad)
        }
    }

    func test_a_schedule_whose_environment_was_deleted_is_cancelled_with_it_and_a_rollback_applies_in_its_own() throws {
        let server = try server()
        defer { server.stop() }
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
        XCTAssertEqual(try server.request("PUT", "/environments/staging/preferences/age", json: ["value": 30]).status, 200)
        let base = try server.currentRevision()
        XCTAssertEqual(try server.request("PUT", "/environments/staging/preferences/age", json: ["value": 31]).status, 200)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", json: ["value": 40]).status, 200)
        // A rollback scheduled in staging rolls staging back, not default.
        let rollback = try server.request("POST", "/environments/staging/schedules", json: ["at": Self.time(1.2), "rollback": base])
        XCTAssertEqual(rollback.status, 201, rollback.text)
        let rollbackID = try XCTUnwrap(rollback.value?["id"]?.stringValue)
        let orphan = try server.request("POST", "/environments/staging/schedules", json: ["at": Self.time(1.5), "preferences": ["age": 9]])
        let orphanID = try XCTUnwrap(orphan.value?["id"]?.stringValue)
        XCTAssertTrue(try server.wait { try server.get("/environments/staging/schedules/\(rollbackID)").value?["state"] == "applied" })
        XCTAssertEqual(try server.get("/environments/staging/preferences/age").value?["value"], 30)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 40)

        // Deleted before the second is due: the delete cancels it, and making staging again
        // does not bring it back — it is not applied, and does not fail, when its time comes.
        XCTAssertEqual(try server.request("DELETE", "/environments/staging").status, 200)
        XCTAssertEqual(try server.get("/environments/staging/schedules/\(orphanID)").status, 404, "no staging, no schedules of it")
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
        let cancelled = try XCTUnwrap(try server.get("/environments/staging/schedules/\(orphanID)").value)
        XCTAssertEqual(cancelled["state"], "cancelled")
        XCTAssertNotNil(cancelled["finishedAt"])
        XCTAssertEqual(try server.get("/environments/staging/schedules?state=pending").value?["schedules"]?.arrayValue?.count, 0)
        XCTAssertFalse(try server.wait(timeout: 2.5) { try server.get("/environments/staging/schedules/\(orphanID)").value?["state"] != "cancelled" })
        XCTAssertEqual(try server.get("/environments/staging/preferences/age").value?["value"], 5)
        XCTAssertEqual(try server.get("/environments/staging/history").value?["changes"]?.arrayValue?.count, 0, "nothing was written in it")
    }
}
