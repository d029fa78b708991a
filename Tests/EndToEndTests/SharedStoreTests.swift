import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// The `@CloudStorage` idea in the server: two instances sharing one data directory. What one
/// commits reaches the other's per-key subjects — its reads, its streams, its revision — as if
/// it had been written there.
final class SharedStoreTests: XCTestCase {
    func test_a_change_committed_by_another_instance_reaches_this_instances_reads_and_streams() throws {
        let directory = try TemporaryDirectory()
        let writer = try TidingsProcess(dataDirectory: directory.url)
        defer { writer.stop() }
        let reader = try TidingsProcess(dataDirectory: directory.url)
        defer { reader.stop() }

        let stream = try reader.openEventStream("/events?topics=preferences,things&keys=age")
        XCTAssertEqual(try stream.nextEvents(2).map(\.name), ["preference", "things"])

        XCTAssertEqual(try writer.put("age", 42).status, 200)
        XCTAssertEqual(try writer.post(thing: "brb").status, 201)

        let events = try stream.nextEvents(2, timeout: 5)
        XCTAssertEqual(events.map(\.name), ["preference", "things"])
        XCTAssertEqual(events.map(\.id), ["1", "2"], "the revisions the writer's commits took")
        XCTAssertEqual(events[0].value, ["key": "age", "value": 42, "revision": 1])
        XCTAssertEqual(events[1].value?["things"], ["BRB"])
        XCTAssertEqual(try reader.get("/preferences/age").value?["value"], 42)
        XCTAssertEqual(try reader.currentRevision(), 2)

        // And back: the reader's own write takes the next revision of the shared counter.
        XCTAssertEqual(try reader.put("age", 43).value?["revision"], 3)
        XCTAssertEqual(try stream.nextEvent().id, "3")
    }

    func test_a_stream_on_another_key_hears_nothing_of_an_external_change() throws {
        let directory = try TemporaryDirectory()
        let writer = try TidingsProcess(dataDirectory: directory.url)
        defer { writer.stop() }
        let reader = try TidingsProcess(dataDirectory: directory.url)
        defer { reader.stop() }
        let nameStream = try reader.openEventStream("/preferences/name/events")
        XCTAssertEqual(try nameStream.nextEvent().name, "preference")
        XCTAssertEqual(try writer.put("age", 7).status, 200)
        XCTAssertEqual(try writer.put("name", "zed").status, 200)
        let event = try nameStream.nextEvent()
        XCTAssertEqual(event.id, "2", "the change to age (revision 1) never reached the name stream")
        XCTAssertEqual(event.value?["value"], "zed")
    }
}
