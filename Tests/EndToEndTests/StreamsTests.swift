import Foundation
import Synchronization
import XCTest
import TestFixtures
import TidingsTesting

/// openapi.yaml "Event streams", what needs the real binary and its sockets: a reader that backs
/// up and is cut off, HEAD on a keep-alive connection, fan-out across the stream workers under
/// concurrent writers, heartbeats (identity streams; `GzipStreamsTests` runs every one of them
/// again on gzip streams). The streams' rules run in `StreamRoutesTests`.
class StreamsTests: XCTestCase {
    private var server: TidingsProcess!

    override func setUpWithError() throws { server = try TidingsProcess() }
    override func tearDown() { server?.stop(); server = nil }

    static let builtInKeys = ["should_show_hello_world", "onboardingCompleted", "promptedForProVersion", "name",
                              "age", "readyForAction", "speed", "numberOfItems"]

    // MARK: Slow subscribers (a socket that backs up)

    func test_a_non_reading_stream_is_cut_off_while_another_keeps_receiving_and_it_resumes_without_a_gap() throws {
        let stalledConnection = try server.connect()
        // Small enough that the server's side backs up, large enough (64 KiB windows) that
        // draining what the kernel still holds after the cut-off takes no time.
        stalledConnection.setReceiveBuffer(65_536)
        let stalled = try stalledConnection.openEventStream("/preferences/name/events")
        XCTAssertEqual(stalled.reply.status, 200)
        let reader = try server.openEventStream("/preferences/name/events")
        XCTAssertEqual(try reader.nextEvent().id, "0")

        // 48 events of 65 kB (a string preference holds at most 65,536 characters): far past
        // the 1 MiB bound for a client that reads nothing.
        let writes = 48
        var generator = SystemRandomNumberGenerator()
        for index in 1...writes {
            // Letters at random: about as large gzip-coded as not (a repeated letter would
            // compress a thousandfold and never reach the bound on a gzip stream).
            let value = String((0..<65_000).map { _ in Character(UnicodeScalar(UInt8(65 + Int.random(in: 0..<26, using: &generator)))) }) + "\(index)"
            XCTAssertEqual(try server.put("name", value).status, 200)
            let event = try reader.nextEvent(timeout: 10)
            XCTAssertEqual(event.id, "\(index)", "the reading stream was held up")
        }
        // The stalled client now reads what reached it: some events, then the end.
        var received: [EventStreamReader.Event] = []
        for message in try stalled.readToEnd(timeout: 10) {
            if case let .event(id, name, data) = message { received.append(.init(id: id, name: name, data: data)) }
        }
        XCTAssertTrue(stalled.isEnded)
        XCTAssertLessThan(received.count, writes + 1, "the stalled stream was never cut off")
        let lastSeen = try XCTUnwrap(received.last?.id)

        // Resume: the rest, written as the client reads it (more than the bound), then live.
        let resumed = try server.openEventStream("/preferences/name/events", headers: ["Last-Event-ID": lastSeen])
        XCTAssertEqual(try server.put("name", "live").status, 200)
        let missing = writes - Int(lastSeen)!
        let replay = try resumed.nextEvents(missing + 1, timeout: 20)
        XCTAssertEqual(replay.map(\.id), ((Int(lastSeen)! + 1)...(writes + 1)).map(String.init))
        XCTAssertEqual(replay.last?.value?["value"], "live")
        XCTAssertEqual(try reader.nextEvent().id, "\(writes + 1)")
    }

    func test_HEAD_on_a_stream_answers_the_stream_headers_without_a_body() throws {
        let connection = try server.connect()
        let head = try connection.request("HEAD", "/preferences/events")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Type"), "text/event-stream")
        XCTAssertTrue(head.body.isEmpty)
        XCTAssertEqual(try connection.request("GET", "/healthz").status, 200, "the connection is still usable")
    }

    // MARK: Fan-out over the workers, heartbeat

    func test_200_concurrent_streams_receive_the_same_20_changes_in_order() throws {
        let kinds = ["/preferences/numberOfItems/events", "/preferences/events?keys=numberOfItems",
                     "/events?topics=preferences,things&keys=numberOfItems"]
        var streams: [EventStreamReader] = []
        for index in 0..<200 {
            let stream = try server.openEventStream(kinds[index % kinds.count])
            XCTAssertEqual(stream.reply.status, 200)
            streams.append(stream)
        }
        for (index, stream) in streams.enumerated() {
            _ = try stream.nextEvents(index % kinds.count == 2 ? 2 : 1)
        }
        var acknowledged: [String] = []
        for value in 1...20 {
            let reply = try server.put("numberOfItems", value)
            XCTAssertEqual(reply.status, 200)
            acknowledged.append(reply.value?["revision"]?.description ?? "?")
        }
        XCTAssertEqual(acknowledged, (1...20).map(String.init))
        for (index, stream) in streams.enumerated() {
            let events = try stream.nextEvents(20, timeout: 10)
            XCTAssertEqual(events.map(\.id), acknowledged, "stream \(index)")
            XCTAssertEqual(events.compactMap { $0.value?["value"]?.intValue }, Array(1...20), "stream \(index)")
        }
    }

    func test_under_concurrent_writes_a_stream_gets_every_revision_exactly_once_in_order() throws {
        let stream = try server.openEventStream("/events")
        _ = try stream.nextEvents(10)
        let port = server.port
        let acknowledged = Mutex(Set<UInt64>())
        concurrently(8) { client in
            guard let connection = try? HTTPConnection(port: port) else { return }
            for n in 0..<40 {
                let reply: HTTPReply?
                switch n % 4 {
                case 0: reply = try? connection.request("PUT", "/preferences/age", json: ["value": client * 100 + n])
                case 1: reply = try? connection.request("PATCH", "/preferences", json: ["speed": Double(n) / 2, "numberOfItems": client])
                case 2: reply = try? connection.request("POST", "/things", json: ["thing": "c\(client)n\(n)"])
                default: reply = try? connection.request("DELETE", "/things/c\(client)n\(n - 1)")
                }
                if let revision = reply?.revisionHeader, let status = reply?.status, (200..<300).contains(status) {
                    acknowledged.withLock { _ = $0.insert(revision) }
                }
            }
        }
        let current = try server.currentRevision()
        XCTAssertGreaterThan(current, 200)
        var ids: [UInt64] = []
        while ids.last != current {
            let event = try stream.nextEvent()
            ids.append(try XCTUnwrap(event.id.flatMap { UInt64($0) }, "\(event)"))
        }
        XCTAssertEqual(ids, Array(1...current), "every revision once, in order")
        XCTAssertTrue(acknowledged.withLock { $0 }.isSubset(of: Set(ids)))
        // Nothing repeated after the last: the next event is the next change.
        XCTAssertEqual(try server.put("age", -1).status, 200)
        XCTAssertEqual(try stream.nextEvent().id, "\(current + 1)")
    }

    func test_heartbeat_comment_arrives_every_heartbeat_seconds() throws {
        let beating = try TidingsProcess(arguments: ["--heartbeat", "1"])
        defer { beating.stop() }
        let stream = try beating.openEventStream("/preferences/age/events")
        _ = try stream.nextEvent()
        let started = Date()
        var comments = 0
        while comments < 2 && Date().timeIntervalSince(started) < 4 {
            if case .comment(let text) = try stream.nextMessage(timeout: 3) {
                XCTAssertEqual(text, "keep-alive")
                comments += 1
            }
        }
        XCTAssertEqual(comments, 2, "two heartbeats within 4 s at --heartbeat 1")
        XCTAssertGreaterThan(Date().timeIntervalSince(started), 0.9, "heartbeats came faster than every second")
    }
}
