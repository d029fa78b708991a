import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// openapi.yaml "Event streams", one test per rule: snapshot, live events, selection by topic and
/// key, framing of hostile values, resume (replay, `reset`), isolation — read as the frames a
/// client parses. In-process here (the real routes and stream hub, frames recorded by
/// `InProcessStream`); `GzipStreamRoutesTests` runs every rule again against the real binary
/// over gzip-coded sockets. What only a socket shows is `StreamsTests`.
class StreamRoutesTests: XCTestCase {
    private var server: (any TidingsTransport)!

    /// Whether this class's servers are the real binary (its gzip subclass) or in-process.
    class var live: Bool { false }

    static func start(_ options: ServerOptions = ServerOptions()) throws -> any TidingsTransport {
        try options.start(live: live)
    }

    override func setUpWithError() throws { server = try Self.start() }
    override func tearDown() { server = nil }   // stopped as it goes (both transports stop on deinit)

    // MARK: Opening

    func test_stream_headers_are_event_stream_no_cache_no_accel_buffering_and_it_opens_with_retry() throws {
        for target in ["/preferences/events", "/preferences/age/events", "/things/events", "/posts/events", "/events"] {
            let stream = try server.openEventStream(target)
            XCTAssertEqual(stream.reply.status, 200, target)
            XCTAssertEqual(stream.reply.header("Content-Type"), "text/event-stream", target)
            XCTAssertEqual(stream.reply.header("Cache-Control"), "no-cache, no-transform", target)
            XCTAssertEqual(stream.reply.header("X-Accel-Buffering"), "no", target)
            guard case .retry(let milliseconds) = try stream.nextMessage(timeout: 2) else {
                return XCTFail("\(target): the first message is not retry:")
            }
            XCTAssertTrue((1_500...4_500).contains(milliseconds), "\(target): retry is 3 s ±50%, not \(milliseconds)")
        }
    }

    func test_stream_opens_at_once_with_retry_even_when_there_is_nothing_to_send() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        // Resuming at the current revision: no snapshot, no replay, but the stream has started.
        let stream = try server.openEventStream("/preferences/age/events", headers: ["Last-Event-ID": "1"])
        XCTAssertEqual(stream.reply.status, 200)
        guard case .retry = try stream.nextMessage(timeout: 1) else { return XCTFail("no retry: line") }
        // Nothing was sent before the next change: it is the next event.
        XCTAssertEqual(try server.put("age", 7).status, 200)
        XCTAssertEqual(try stream.nextEvent().value, ["key": "age", "value": 7, "revision": 2])
    }

    func test_unknown_preference_stream_is_404() throws {
        assertProblem(try server.get("/preferences/colour/events"), 404)
    }

    // MARK: Snapshot

    func test_preferences_stream_snapshot_is_one_preference_event_per_key_all_with_the_current_revision() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        XCTAssertEqual(try server.post(thing: "x").status, 201)
        let stream = try server.openEventStream("/preferences/events")
        let events = try stream.nextEvents(8)
        XCTAssertEqual(events.map(\.name), Array(repeating: "preference", count: 8))
        XCTAssertEqual(events.map(\.id), Array(repeating: "2", count: 8))
        XCTAssertEqual(Set(events.compactMap { $0.value?["key"]?.stringValue }), Set(StreamsTests.builtInKeys))
        let age = try XCTUnwrap(events.first { $0.value?["key"] == "age" })
        XCTAssertEqual(age.value, ["key": "age", "value": 6, "revision": 1])
        let name = try XCTUnwrap(events.first { $0.value?["key"] == "name" })
        XCTAssertEqual(name.value, ["key": "name", "value": "fat", "revision": 0])
        // Eight and no more: the next event is the next change.
        XCTAssertEqual(try server.put("age", 7).status, 200)
        XCTAssertEqual(try stream.nextEvent().value, ["key": "age", "value": 7, "revision": 3])
    }

    func test_preferences_stream_keys_selects_the_covered_keys() throws {
        let stream = try server.openEventStream("/preferences/events?keys=age,name")
        let events = try stream.nextEvents(2)
        XCTAssertEqual(Set(events.compactMap { $0.value?["key"]?.stringValue }), ["age", "name"])
        // Nothing else: after a change it does not cover, the next event is the one it does.
        XCTAssertEqual(try server.put("speed", 1).status, 200)
        XCTAssertEqual(try server.put("name", "n").status, 200)
        XCTAssertEqual(try stream.nextEvent().value, ["key": "name", "value": "n", "revision": 2])
    }

    func test_single_preference_stream_sends_its_value_then_each_change_with_id_and_data() throws {
        let stream = try server.openEventStream("/preferences/age/events")
        let snapshot = try stream.nextEvent()
        XCTAssertEqual(snapshot.id, "0")
        XCTAssertEqual(snapshot.name, "preference")
        XCTAssertEqual(snapshot.value, ["key": "age", "value": 5, "revision": 0])
        XCTAssertEqual(try server.put("age", 6).status, 200)
        let change = try stream.nextEvent()
        XCTAssertEqual(change.id, "1")
        XCTAssertEqual(change.name, "preference")
        XCTAssertEqual(change.value, ["key": "age", "value": 6, "revision": 1])
        XCTAssertTrue(change.data.allSatisfy { !$0.isNewline }, "data is one line")
    }

    func test_things_stream_sends_the_list_then_add_remove_and_replace_changes() throws {
        XCTAssertEqual(try server.post(thing: "a").status, 201)
        let stream = try server.openEventStream("/things/events")
        let snapshot = try stream.nextEvent()
        XCTAssertEqual(snapshot.name, "things")
        XCTAssertEqual(snapshot.id, "1")
        XCTAssertEqual(snapshot.value?["things"], ["A"])
        XCTAssertEqual(snapshot.value?["revision"], 1)

        XCTAssertEqual(try server.post(thing: "b").status, 201)
        XCTAssertEqual(try server.request("DELETE", "/things/a").status, 204)
        XCTAssertEqual(try server.put(things: ["x", "y"]).status, 200)
        let events = try stream.nextEvents(3)
        XCTAssertEqual(events.map(\.id), ["2", "3", "4"])
        XCTAssertEqual(events[0].value, ["things": ["A", "B"], "revision": 2, "change": ["op": "add", "thing": "B"]])
        XCTAssertEqual(events[1].value, ["things": ["B"], "revision": 3, "change": ["op": "remove", "thing": "A"]])
        XCTAssertEqual(events[2].value?["things"], ["X", "Y"])
        XCTAssertEqual(events[2].value?["change"]?["op"], "replace")
    }

    func test_multiplexed_stream_carries_every_topic_on_one_connection() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        let stream = try server.openEventStream("/events")
        let snapshot = try stream.nextEvents(10)
        XCTAssertEqual(snapshot.filter { $0.name == "preference" }.count, 8)
        XCTAssertEqual(snapshot.filter { $0.name == "things" }.count, 1)
        XCTAssertEqual(snapshot.filter { $0.name == "posts" }.count, 1)
        XCTAssertEqual(Set(snapshot.map(\.id)), ["1"])
        XCTAssertNotNil(snapshot.first { $0.name == "posts" }?.value?["state"])

        XCTAssertEqual(try server.put("name", "mux").status, 200)
        XCTAssertEqual(try server.post(thing: "mux").status, 201)
        let live = try nextEvents(stream, named: ["preference", "things"], count: 2)
        XCTAssertEqual(live.map(\.name), ["preference", "things"])
        XCTAssertEqual(live.map(\.id), ["2", "3"])
    }

    func test_multiplexed_stream_topics_and_keys_select_what_it_covers() throws {
        let stream = try server.openEventStream("/events?topics=preferences,things&keys=age")
        let snapshot = try stream.nextEvents(2)
        XCTAssertEqual(snapshot.map(\.name), ["preference", "things"])
        XCTAssertEqual(snapshot[0].value?["key"], "age")

        let thingsOnly = try server.openEventStream("/events?topics=things")
        XCTAssertEqual(try thingsOnly.nextEvent().name, "things")

        // After changes they do not cover, the next events are exactly the ones they do.
        XCTAssertEqual(try server.put("name", "ignored").status, 200)
        XCTAssertEqual(try server.put("age", 6).status, 200)
        XCTAssertEqual(try server.post(thing: "x").status, 201)
        XCTAssertEqual(try stream.nextEvents(2).map(\.id), ["2", "3"])
        XCTAssertEqual(try thingsOnly.nextEvent().id, "3")
    }

    // MARK: Event framing

    func test_a_value_containing_blank_lines_and_data_fields_arrives_intact_as_one_event() throws {
        let stream = try server.openEventStream("/preferences/name/events")
        _ = try stream.nextEvent()
        let evil = "a\n\ndata: x\n\nevent: reset\nid: 99\r\rdata: y\r\n\r\n: comment\n"
        XCTAssertEqual(try server.put("name", evil).status, 200)
        XCTAssertEqual(try server.put("name", "after").status, 200)
        let events = try stream.nextEvents(2)
        XCTAssertEqual(events[0].id, "1")
        XCTAssertEqual(events[0].name, "preference")
        XCTAssertEqual(events[0].value?["value"]?.stringValue, evil)
        XCTAssertTrue(events[0].data.allSatisfy { !$0.isNewline }, "raw line breaks in data: \(events[0].data)")
        XCTAssertEqual(events[1].id, "2")
        XCTAssertEqual(events[1].value?["value"], "after")
        // The value forged no event: the next one is the next change.
        XCTAssertEqual(try server.put("name", "end").status, 200)
        XCTAssertEqual(try stream.nextEvent().value, ["key": "name", "value": "end", "revision": 3])
    }

    // MARK: Resume

    func test_resume_with_Last_Event_ID_replays_exactly_the_missed_events_then_goes_live() throws {
        try assertResumeGivesExactlyTheMissedEvents { id in ("/preferences/events", ["Last-Event-ID": id]) }
    }

    func test_resume_with_query_lastEventId_replays_exactly_the_missed_events_then_goes_live() throws {
        try assertResumeGivesExactlyTheMissedEvents { id in ("/preferences/events?lastEventId=\(id)", [:]) }
    }

    func test_resume_on_the_multiplexed_stream_replays_every_covered_topic_in_order() throws {
        let first = try server.openEventStream("/events?topics=preferences,things")
        _ = try first.nextEvents(9)
        XCTAssertEqual(try server.put("age", 1).status, 200)
        let seen = try first.nextEvent()
        XCTAssertEqual(try server.post(thing: "a").status, 201)
        XCTAssertEqual(try server.put("name", "b").status, 200)
        XCTAssertEqual(try server.request("DELETE", "/things/a").status, 204)
        let resumed = try server.openEventStream("/events?topics=preferences,things",
                                                 headers: ["Last-Event-ID": seen.id ?? ""])
        let replay = try resumed.nextEvents(3)
        XCTAssertEqual(replay.map(\.id), ["2", "3", "4"])
        XCTAssertEqual(replay.map(\.name), ["things", "preference", "things"])
        // Then live, nothing repeated: the next event is the next change.
        XCTAssertEqual(try server.put("age", 7).status, 200)
        XCTAssertEqual(try resumed.nextEvent().id, "5")
    }

    /// Resume reaches as far back as the history does (API.md "History"): past the replay
    /// buffer in memory, the change table answers.
    func test_resume_from_an_id_older_than_the_replay_buffer_replays_from_the_history() throws {
        let server = try Self.start(ServerOptions(replayBuffer: 3))
                for value in 1...6 { XCTAssertEqual(try server.put("age", value).status, 200) }
        let stream = try server.openEventStream("/preferences/events?keys=age,name", headers: ["Last-Event-ID": "1"])
        let replay = try stream.nextEvents(5)
        XCTAssertEqual(replay.map(\.id), ["2", "3", "4", "5", "6"])
        XCTAssertEqual(replay.map { $0.value?["value"] }, [2, 3, 4, 5, 6])
        XCTAssertEqual(try server.put("age", 7).status, 200)
        XCTAssertEqual(try stream.nextEvent().id, "7", "then live, no gap, no duplicate")
    }

    func test_resume_from_an_id_older_than_the_history_sends_reset_and_a_fresh_snapshot() throws {
        let small = try Self.start(ServerOptions(replayBuffer: 3, replayBytes: 1000, historyBytes: 100))
        for value in 1...6 { XCTAssertEqual(try small.put("age", value).status, 200) }
        let stream = try small.openEventStream("/preferences/events?keys=age,name", headers: ["Last-Event-ID": "1"])
        let reset = try stream.nextEvent()
        XCTAssertEqual(reset.name, "reset")
        XCTAssertNotNil(reset.value?["reason"]?.stringValue)
        let snapshot = try stream.nextEvents(2)
        XCTAssertEqual(snapshot.map(\.name), ["preference", "preference"])
        XCTAssertEqual(snapshot.map(\.id), ["6", "6"])
        XCTAssertEqual(snapshot.first { $0.value?["key"] == "age" }?.value?["value"], 6)
        // Within the buffer, resume still replays.
        let recent = try small.openEventStream("/preferences/age/events?lastEventId=4")
        XCTAssertEqual(try recent.nextEvents(2).map(\.id), ["5", "6"])
        XCTAssertEqual(try small.put("age", 7).status, 200)
        XCTAssertEqual(try recent.nextEvent().id, "7")
        XCTAssertEqual(try stream.nextEvent().id, "7", "nothing came between the snapshot and the next change")
    }

    func test_resume_from_an_id_newer_than_the_current_revision_sends_reset_and_a_fresh_snapshot() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        for headers in [["Last-Event-ID": "2"], ["Last-Event-ID": "999999"]] {
            let stream = try server.openEventStream("/preferences/age/events", headers: headers)
            let reset = try stream.nextEvent()
            XCTAssertEqual(reset.name, "reset", "\(headers)")
            XCTAssertNotNil(reset.value?["reason"]?.stringValue)
            let snapshot = try stream.nextEvent()
            XCTAssertEqual(snapshot.name, "preference")
            XCTAssertEqual(snapshot.id, "1")
            XCTAssertEqual(snapshot.value, ["key": "age", "value": 6, "revision": 1])
        }
        let query = try server.openEventStream("/things/events?lastEventId=5")
        XCTAssertEqual(try query.nextEvents(2).map(\.name), ["reset", "things"])
    }

    func test_resume_with_an_id_that_is_not_a_revision_is_400() throws {
        let reply = try server.get("/preferences/age/events", headers: ["Last-Event-ID": "abc"])
        assertProblem(reply, 400)
    }

    func test_resume_with_an_id_beyond_64_bits_sends_reset_and_a_fresh_snapshot() throws {
        XCTAssertEqual(try server.put("age", 6).status, 200)
        let stream = try server.openEventStream("/preferences/age/events", headers: ["Last-Event-ID": "99999999999999999999"])
        let events = try stream.nextEvents(2)
        XCTAssertEqual(events.map(\.name), ["reset", "preference"])
        XCTAssertEqual(events[1].value, ["key": "age", "value": 6, "revision": 1])
    }

    // MARK: Isolation

    func test_a_stream_for_key_a_never_receives_changes_of_key_b() throws {
        let perKey = try server.openEventStream("/preferences/age/events")
        let filtered = try server.openEventStream("/preferences/events?keys=age")
        let multiplexed = try server.openEventStream("/events?topics=preferences&keys=age")
        let thingsStream = try server.openEventStream("/things/events")
        for stream in [perKey, filtered, multiplexed, thingsStream] { _ = try stream.nextEvent() }

        for value in ["b1", "b2", "b3"] { XCTAssertEqual(try server.put("name", value).status, 200) }
        XCTAssertEqual(try server.request("PATCH", "/preferences", json: ["speed": 3, "numberOfItems": 4]).status, 200)
        XCTAssertEqual(try server.put("age", 6).status, 200)  // revision 6
        for stream in [perKey, filtered, multiplexed] {
            let event = try stream.nextEvent()
            XCTAssertEqual(event.id, "6", "a change of another key arrived first: \(event)")
            XCTAssertEqual(event.value?["key"], "age")
        }
        // The preference changes never reached the things stream: its next event is the thing.
        XCTAssertEqual(try server.post(thing: "t").status, 201)
        XCTAssertEqual(try thingsStream.nextEvent().id, "7")
        // Nor the thing the per-key stream: its next event is the next change of its key.
        XCTAssertEqual(try server.put("age", 7).status, 200)
        XCTAssertEqual(try perKey.nextEvent().id, "8")
    }

    // MARK: Helpers

    /// Reads events until `count` of the `names` arrived (others, such as posts, are skipped).
    private func nextEvents(_ stream: any EventStreamReading, named names: Set<String>, count: Int) throws -> [StreamEvent] {
        var events: [StreamEvent] = []
        while events.count < count {
            let event = try stream.nextEvent()
            if names.contains(event.name ?? "") { events.append(event) }
        }
        return events
    }

    /// Subscribe, see some changes, disconnect, miss five (plus one it does not cover),
    /// resume: exactly the five, in order, then live — no gap, no duplicate.
    private func assertResumeGivesExactlyTheMissedEvents(_ resume: (String) -> (String, [String: String]),
                                                        file: StaticString = #filePath, line: UInt = #line) throws {
        var first: (any EventStreamReading)? = try server.openEventStream("/preferences/events")
        _ = try first!.nextEvents(8)
        XCTAssertEqual(try server.put("age", 1).status, 200)
        XCTAssertEqual(try server.put("age", 2).status, 200)
        let seen = try first!.nextEvents(2)
        let lastSeen = try XCTUnwrap(seen.last?.id)
        first = nil  // disconnect

        var missed: [String] = []
        for (key, value) in [("age", 3), ("name", "x"), ("speed", 4)] as [(String, Any)] {
            missed.append(try server.put(key, value).value?["revision"]?.description ?? "?")
        }
        XCTAssertEqual(try server.post(thing: "not covered").status, 201)
        let patch = try server.request("PATCH", "/preferences", json: ["age": 5, "readyForAction": true])
        XCTAssertEqual(patch.status, 200)
        let current = try XCTUnwrap(patch.revisionHeader)
        missed += ["\(current - 1)", "\(current)"]

        let (target, headers) = resume(lastSeen)
        let resumed = try server.openEventStream(target, headers: headers)
        let replay = try resumed.nextEvents(5)
        XCTAssertEqual(replay.map(\.id), missed, file: file, line: line)
        XCTAssertEqual(replay.map(\.name), Array(repeating: "preference", count: 5), file: file, line: line)
        XCTAssertEqual(replay[0].value, ["key": "age", "value": 3, "revision": .number(Double(missed[0])!)], file: file, line: line)
        // Then live, nothing repeated: the next event is the next change.
        let live = try server.put("age", 6)
        XCTAssertEqual(try resumed.nextEvent().id, live.value?["revision"]?.description, file: file, line: line)
    }
}
