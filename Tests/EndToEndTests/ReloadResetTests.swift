import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// An instance that falls behind a pruned history — it was stopped while another instance on the
/// same data directory wrote more changes than the store keeps — rebuilds its memory from a
/// snapshot. Its open streams then get `reset` and the current values (an OFREP stream one
/// refetch notification), with ids still strictly increasing, and live events follow.
final class ReloadResetTests: XCTestCase {
    func test_streams_on_an_instance_that_reloads_from_a_snapshot_get_reset_the_current_values_then_live_events() throws {
        let directory = try TemporaryDirectory()
        // A short replay buffer and a short history: the store keeps about 400 changes.
        let flags = ["--replay-buffer", "10", "--history-bytes", "20000"]
        let writer = try TidingsProcess(arguments: flags, dataDirectory: directory.url)
        let behind = try TidingsProcess(arguments: flags, dataDirectory: directory.url)
        defer { writer.stop(); behind.stop() }
        let failuresBefore = testRun?.totalFailureCount ?? 0
        let started = Date()
        defer {
            if (testRun?.totalFailureCount ?? 0) > failuresBefore {
                print("--- test started \(started)\n--- writer:\n\(writer.log.suffix(6_000))\n--- behind:\n\(behind.log.suffix(6_000))")
            }
        }

        let preferences = try behind.openEventStream("/preferences/events?keys=age")
        let snapshot = try preferences.nextEvent()
        XCTAssertEqual(snapshot.name, "preference")
        let ofrep = try behind.openEventStream("/ofrep/v1/events")
        guard case .retry = try ofrep.nextMessage(timeout: 2) else { return XCTFail("no retry: line") }
        let start = UInt64(snapshot.id ?? "") ?? 0

        // Stopped, `behind` cannot follow; the store keeps about 400 changes, so 1,300 more
        // prune the history past the revision it last applied.
        let pid = behind.pid
        XCTAssertEqual(kill(pid, SIGSTOP), 0)
        var resumed = false
        defer { if !resumed { kill(pid, SIGCONT) } }
        let connection = try writer.connect()
        for value in 1...1_300 {
            let reply = try connection.request("PUT", "/preferences/age", json: ["value": value])
            XCTAssertEqual(reply.status, 200)
            if reply.status != 200 { return }
        }
        let last = try writer.currentRevision()
        print("1,300 writes done \(Date()); behind resumes")
        XCTAssertEqual(kill(pid, SIGCONT), 0)
        resumed = true

        // Whatever single changes arrive before the reload, the stream then says `reset` and
        // sends the current value (a snapshot, at the reset's id); every other id is above the
        // one before it.
        var previous = start
        var sawReset = false
        var previousWasReset = false
        var current: Int?
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, current != 1_300 || !sawReset {
            let event = try preferences.nextEvent(timeout: 10)
            let id = try XCTUnwrap(event.id.flatMap(UInt64.init), "every event has an id")
            if event.name == "reset" {
                XCTAssertGreaterThanOrEqual(id, previous, "reset comes at the revision reloaded")
                sawReset = true
            } else {
                if previousWasReset {
                    XCTAssertEqual(id, previous, "the snapshot after `reset` carries its revision")
                } else {
                    XCTAssertGreaterThan(id, previous, "ids strictly increase")
                }
                XCTAssertEqual(event.name, "preference")
                current = event.json?["value"] as? Int
            }
            previousWasReset = event.name == "reset"
            previous = id
        }
        XCTAssertTrue(sawReset, "the stream was told to start over")
        XCTAssertEqual(current, 1_300, "then got the current value")
        XCTAssertEqual(previous, last, "at the writer's revision")

        // The OFREP stream: a notification at (or after) the reloaded revision makes the client refetch.
        var notified: UInt64 = 0
        while notified < last {
            let event = try ofrep.nextEvent(timeout: 10)
            XCTAssertEqual(event.name, "message")
            XCTAssertEqual(event.json?["type"] as? String, "refetchEvaluation")
            let id = try XCTUnwrap(event.id.flatMap(UInt64.init))
            XCTAssertGreaterThan(id, notified, "ids strictly increase")
            notified = id
        }
        XCTAssertEqual(notified, last)

        // Live events continue on the instance that reloaded.
        XCTAssertEqual(try writer.put("age", 7).status, 200)
        let live = try preferences.nextEvent(timeout: 10)
        XCTAssertEqual(live.name, "preference")
        XCTAssertEqual(live.json?["value"] as? Int, 7)
        XCTAssertGreaterThan(UInt64(live.id ?? "") ?? 0, last)
        XCTAssertEqual(try ofrep.nextEvent(timeout: 10).id, live.id)
    }
}
