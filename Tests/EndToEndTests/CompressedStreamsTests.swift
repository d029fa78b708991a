import Foundation
import Synchronization
import XCTest
import TestFixtures
import TidingsTesting

/// API.md "Caching and compression", event streams: what only gzip streams have. Each event is
/// deflated once and shared by every gzip subscriber (counted in `/metrics`), each event decodes
/// as it arrives (before the next is written), a clean end closes the gzip member with a trailer
/// zlib verifies (HTTP/1.1 chunked and HTTP/1.0 close-delimited), and conflation works on the
/// compressed frames. (`GzipStreamsTests` runs every identity-stream rule on gzip streams.)
final class CompressedStreamsTests: XCTestCase {
    private let gzip = ["Accept-Encoding": "gzip"]

    /// `tidings_<name>` samples from `/metrics`, by their label text.
    private func counter(_ server: TidingsProcess, _ name: String, labels: String = "") throws -> Int {
        let series = "tidings_\(name)\(labels)"
        return try Int(XCTUnwrap(MetricSamples.parse(server.get("/metrics").text)[series], "no \(series) in /metrics"))
    }

    func test_each_event_is_deflated_once_for_every_gzip_subscriber_on_every_worker() throws {
        let server = try TidingsProcess(arguments: ["--stream-workers", "2"])
        defer { server.stop() }
        let subscribers = 6
        let streams = try (0..<subscribers).map { _ in try server.openEventStream("/preferences/age/events", headers: gzip) }
        for stream in streams {
            XCTAssertTrue(stream.isGzip)
            XCTAssertEqual(try stream.nextEvent().id, "0", "snapshot")
        }
        let identity = try server.openEventStream("/preferences/age/events")
        XCTAssertFalse(identity.isGzip)
        _ = try identity.nextEvent()
        XCTAssertEqual(try counter(server, "gzip_streams_opened_total"), subscribers)
        let sharedBefore = try counter(server, "stream_compressions_total", labels: #"{kind="shared"}"#)
        let perStreamBefore = try counter(server, "stream_compressions_total", labels: #"{kind="stream"}"#)
        let deliveriesBefore = try counter(server, "stream_gzip_deliveries_total")

        let events = 5
        for value in 1...events {
            XCTAssertEqual(try server.put("age", value).status, 200)
            for stream in streams + [identity] {
                let event = try stream.nextEvent()
                XCTAssertEqual(event.id, "\(value)")
                XCTAssertEqual(event.json?["value"] as? Int, value)
            }
        }
        XCTAssertEqual(try counter(server, "stream_compressions_total", labels: #"{kind="shared"}"#) - sharedBefore, events,
                       "one compression per event, not per subscriber (\(subscribers) gzip subscribers on 2 workers)")
        XCTAssertEqual(try counter(server, "stream_compressions_total", labels: #"{kind="stream"}"#), perStreamBefore,
                       "live events were deflated per stream")
        XCTAssertEqual(try counter(server, "stream_gzip_deliveries_total") - deliveriesBefore, events * subscribers)
    }

    func test_each_event_decodes_as_it_arrives_before_the_next_one_is_written() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let stream = try server.openEventStream("/events?topics=preferences,things", headers: gzip)
        XCTAssertEqual(stream.reply.header("Content-Encoding"), "gzip")
        XCTAssertEqual(stream.reply.header("Vary"), "Accept-Encoding")
        XCTAssertEqual(try stream.nextEvents(9).count, 9, "snapshot")
        // Nothing else is written until the decoder has produced the event just announced: the
        // bytes that reached the client decode to it on their own.
        for index in 1...20 {
            let before = stream.bodyBytes
            if index.isMultiple(of: 2) {
                XCTAssertEqual(try server.put("name", "n\(index)").status, 200)
            } else {
                XCTAssertEqual(try server.post(thing: "t\(index)").status, 201)
            }
            let event = try stream.nextEvent(timeout: 5)
            XCTAssertEqual(event.id, "\(index)")
            XCTAssertGreaterThan(stream.bodyBytes, before)
            XCTAssertFalse(stream.gzipMemberComplete)
        }
    }

    func test_a_clean_end_closes_the_gzip_member_on_chunked_and_close_delimited_streams() throws {
        let server = try TidingsProcess(arguments: ["--heartbeat", "1"])
        let chunked = try server.openEventStream("/preferences/name/events", headers: gzip)
        XCTAssertEqual(chunked.reply.header("Transfer-Encoding")?.lowercased(), "chunked")
        XCTAssertEqual(try chunked.nextEvent().json?["value"] as? String, "fat")

        let connection = try server.connect()
        connection.write("GET /preferences/name/events HTTP/1.0\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n")
        let head = try connection.readHead()
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Encoding"), "gzip")
        XCTAssertNil(head.header("Transfer-Encoding"))
        XCTAssertNil(head.header("Content-Length"))
        let closeDelimited = EventStreamReader(connection: connection, reply: head)
        XCTAssertEqual(try closeDelimited.nextEvent().json?["value"] as? String, "fat")

        XCTAssertEqual(try server.put("name", "thin").status, 200)
        for stream in [chunked, closeDelimited] {
            XCTAssertEqual(try stream.nextEvent().json?["value"] as? String, "thin")
            // A heartbeat (the shared keep-alive piece) decodes too.
            var sawHeartbeat = false
            while !sawHeartbeat { if case .comment("keep-alive") = try stream.nextMessage(timeout: 3) { sawHeartbeat = true } }
        }
        // SIGTERM ends every stream cleanly: the member's final block and trailer (CRC-32 and
        // length of everything sent, checked by zlib), then the end of the response.
        XCTAssertEqual(server.stop(), 0)
        for stream in [chunked, closeDelimited] {
            _ = try stream.readToEnd(timeout: 5)
            XCTAssertTrue(stream.isEnded)
            XCTAssertTrue(stream.gzipMemberComplete, "the gzip member was not ended with a valid trailer")
        }
    }

    func test_stream_padding_keeps_its_bytes_on_the_wire_of_a_gzip_stream() throws {
        let server = try TidingsProcess(arguments: ["--stream-padding", "4096"])
        defer { server.stop() }
        let stream = try server.openEventStream("/preferences/age/events", headers: gzip)
        XCTAssertTrue(stream.isGzip)
        // The padding comment comes first, stored rather than deflated: a proxy that holds a
        // response's first bytes sees at least as many as asked for.
        guard case .comment = try stream.nextMessage() else { return XCTFail("the stream did not open with the padding") }
        XCTAssertGreaterThanOrEqual(stream.bodyBytes, 10 + 4_096)
        XCTAssertEqual(try stream.nextEvent().json?["value"] as? Int, 5)
        XCTAssertEqual(try server.put("age", 6).status, 200)
        XCTAssertEqual(try stream.nextEvent().json?["value"] as? Int, 6)
    }

    func test_a_conflating_gzip_stream_that_reads_nothing_ends_with_the_latest_value() throws {
        let server = try TidingsProcess(arguments: ["--stream-workers", "2"])
        defer { server.stop() }
        let connection = try server.connect(receiveBuffer: 4096)
        let stream = try connection.openEventStream("/preferences/events?keys=name,age&conflate=true", headers: gzip)
        XCTAssertTrue(stream.isGzip)
        XCTAssertEqual(try stream.nextEvents(2).count, 2, "snapshot")
        // 1,200 changes of ~4 KiB of random hex (about 2 KiB each once deflated: far over the
        // 1 MiB bound) while the stream reads nothing.
        let failures = Mutex(0)
        let port = server.port
        concurrently(6) { writer in
            guard let client = try? HTTPConnection(port: port) else { return failures.withLock { $0 += 1 } }
            var generator = SystemRandomNumberGenerator()
            let hexDigits = Array("0123456789abcdef".utf8)
            for index in 0..<200 {
                let key = index % 5 == 0 ? "age" : "name"
                let noise = String(decoding: (0..<4_000).map { _ in hexDigits[Int.random(in: 0..<16, using: &generator)] }, as: UTF8.self)
                let value: Any = key == "age" ? index % 100 : "w\(writer)-\(index)-" + noise
                let reply = try? client.request("PUT", "/preferences/\(key)", json: ["value": value])
                if reply?.status != 200 { failures.withLock { $0 += 1 } }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }, 0)
        let final = try server.get("/preferences/name").decode([String: JSONValue].self)
        let finalAge = try server.get("/preferences/age").decode([String: JSONValue].self)
        let revision = try server.currentRevision()
        var ids: [UInt64] = [], latest: [String: JSONValue] = [:]
        while ids.last != revision {
            let event = try stream.nextEvent(timeout: 10)
            ids.append(try XCTUnwrap(event.id.flatMap { UInt64($0) }))
            let data = try JSONDecoder().decode([String: JSONValue].self, from: Data(event.data.utf8))
            if let key = data["key"]?.stringValue { latest[key] = data["value"] }
        }
        XCTAssertEqual(ids, ids.sorted(), "ids not increasing")
        XCTAssertEqual(Set(ids).count, ids.count, "an id twice")
        XCTAssertLessThan(ids.count, 1_200, "nothing was conflated (was the bound ever reached?)")
        XCTAssertEqual(latest["name"], final["value"])
        XCTAssertEqual(latest["age"], finalAge["value"])
    }
}
