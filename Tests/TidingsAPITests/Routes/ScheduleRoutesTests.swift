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
        XCTAssertEqual(try server.get("/schedules").value?["schedules"]?.arrayValue?.count, 0)
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
        XCTAssertTrue(failed["detail"]?.stringValue?.contains("speed") == true, "\(failed)")
        XCTAssertEqual(try server.get("/preferences/speed").value?["value"], 0)
    }
}
