import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// An event id one instance gave resumes on another right away: the other instance waits
/// (at most 1 s) for the change its store already committed, instead of answering `reset` and a
/// snapshot. Before: 20 of 50 resumes right after a write got `reset` (PostgreSQL); with SQLite's
/// 100 ms doorbell nearly all did.
final class ResumeAcrossInstancesTests: XCTestCase {
    func test_an_id_from_A_resumes_on_B_right_after_the_write_without_reset() throws {
        let directory = try TemporaryDirectory()
        let a = try TidingsProcess(dataDirectory: directory.url)
        defer { a.stop() }
        let b = try TidingsProcess(dataDirectory: directory.url)
        defer { b.stop() }
        var resets = 0
        for round in 0..<10 {
            let put = try a.put("age", 20 + round)
            XCTAssertEqual(put.status, 200)
            let revision = try XCTUnwrap(put.value?["revision"]?.intValue)
            // At once, on B, from the id A's stream would have shown for this write.
            let stream = try b.openEventStream("/preferences/age/events", headers: ["Last-Event-ID": String(revision)])
            XCTAssertEqual(stream.reply.status, 200)
            let next = try a.put("age", 100 + round)
            let event = try stream.nextEvent(timeout: 5)
            if event.name == "reset" { resets += 1; continue }
            XCTAssertEqual(event.name, "preference")
            XCTAssertEqual(event.id, next.value?["revision"]?.intValue.map(String.init), "the change after the id, nothing before it")
        }
        XCTAssertEqual(resets, 0, "resumes answered with reset")
        // An id no instance has committed is still answered with reset at once.
        let started = Date()
        let future = try b.openEventStream("/preferences/age/events", headers: ["Last-Event-ID": "999999"])
        XCTAssertEqual(try future.nextEvent(timeout: 5).name, "reset")
        XCTAssertLessThan(Date().timeIntervalSince(started), 0.9)
    }
}
