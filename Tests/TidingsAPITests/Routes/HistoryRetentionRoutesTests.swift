import Foundation
import TestFixtures
import TidingsAPI
import TidingsTesting
import XCTest

/// History (API.md "History") in-process, on SQLite and on PostgreSQL: 410 past retention for
/// as-of reads and rollback, and the audit stream with its resume from the change table. What
/// needs processes (SIGHUP, SIGKILL, several instances, start-up) is `EndToEndTests.HistoryTests`.
final class HistoryRetentionRoutesTests: XCTestCase {
    private func records(_ server: InProcessTidings, _ target: String, token: String) throws -> [[String: Any]] {
        let reply = try server.get(target, headers: token.isEmpty ? [:] : ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(reply.status, 200, reply.text)
        return reply.json?["changes"] as? [[String: Any]] ?? []
    }

    /// Past retention: as-of and rollback answer 410 naming the oldest readable revision.
    private func checkRetention(databaseURL: String? = nil) throws {
        let server = try InProcessTidings {
            $0.replayBuffer = 2
            $0.replayBytes = 100
            $0.historyBytes = 300
            $0.databaseURL = databaseURL
        }
        defer { server.stop() }
        for value in 1...20 { XCTAssertEqual(try server.put("age", value).status, 200) }
        let history = try records(server, "/history?after=0", token: "")
        let oldest = try XCTUnwrap(history.first?["revision"] as? Int)
        XCTAssertGreaterThan(oldest, 2, "old records were dropped")
        let gone = try server.get("/preferences?asOf=1")
        XCTAssertEqual(gone.status, 410, gone.text)
        XCTAssertEqual(gone.header("Content-Type"), "application/problem+json")
        XCTAssertEqual(gone.json?["oldestRevision"] as? Int, oldest - 1)
        let readable = try server.get("/preferences/age?asOf=\(oldest - 1)")
        XCTAssertEqual(readable.status, 200)
        XCTAssertEqual(readable.value?["value"], .number(Double(oldest - 1)))
        XCTAssertEqual(try server.request("POST", "/preferences/rollback", json: ["revision": 1]).status, 410)
        let back = try server.request("POST", "/preferences/rollback", json: ["revision": oldest - 1])
        XCTAssertEqual(back.status, 200, back.text)
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], .number(Double(oldest - 1)))
    }

    func test_410_after_retention_drops_old_records_on_SQLite() throws {
        try checkRetention()
    }

    func test_410_after_retention_drops_old_records_on_PostgreSQL() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        try checkRetention(databaseURL: cluster.url)
    }

    func test_the_audit_stream_carries_each_record_and_resumes_without_a_gap() throws {
        let server = try InProcessTidings { $0.replayBuffer = 2 }
        defer { server.stop() }
        let audit = try server.openEventStream("/events?topics=history")
        XCTAssertEqual(try server.put("age", 6, headers: ["Tidings-Reason": "first"]).status, 200)
        XCTAssertEqual(try server.post(thing: "brb").status, 201)
        XCTAssertEqual(try server.request("PATCH", "/preferences", json: ["name": "x", "speed": 1.5]).status, 200)
        let live = try audit.nextEvents(4)
        XCTAssertEqual(live.map(\.id), ["1", "2", "3", "4"])
        XCTAssertEqual(Set(live.map(\.name)), ["change"])
        XCTAssertEqual(live[0].json?["reason"] as? String, "first")
        XCTAssertEqual(live[0].json?["after"] as? Int, 6)
        XCTAssertEqual(live[1].json?["op"] as? String, "add")
        XCTAssertEqual(live[1].json?["after"] as? String, "BRB")
        // Posts documents are not records; a server's own posts writes never reach the stream.
        // Resume from 2, past the replay buffer of 2: the change table answers, then live.
        for value in 7...9 { XCTAssertEqual(try server.put("age", value).status, 200) }
        let resumed = try server.openEventStream("/events?topics=history", headers: ["Last-Event-ID": "2"])
        let replay = try resumed.nextEvents(5)
        XCTAssertEqual(replay.map(\.id), ["3", "4", "5", "6", "7"])
        XCTAssertEqual(try server.put("age", 10).status, 200)
        XCTAssertEqual(try resumed.nextEvent().id, "8")
        // Nothing repeated: the next record is the next change's.
        XCTAssertEqual(try server.put("age", 11).status, 200)
        XCTAssertEqual(try resumed.nextEvent().id, "9")
        XCTAssertEqual(try server.get("/events?topics=history,things").status, 400, "the audit stream is a stream of its own")
    }
}
