import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// Streams that open at one revision share its snapshot's frames: 200 streams that never read
/// held 1.9 MiB each with a 2 MB feed before (each its own copy of the snapshot).
final class SnapshotMemoryTests: XCTestCase {
    /// The server's resident memory in KiB.
    private func residentKiB(_ server: TidingsProcess) throws -> Int {
        try XCTUnwrap(ProcessStats.residentBytes(server.pid)) >> 10
    }

    func test_200_non_reading_streams_share_one_2_MB_posts_snapshot() throws {
        let feed = PostsFixture.twoMegabyteFeed()
        XCTAssertGreaterThan(feed.utf8.count, 1_900_000)
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(feed)
        let server = try PostsFixture.server(upstream, timeout: 10)
        defer { server.stop() }
        try server.settledPosts("loaded")
        // One stream read to the end first, so every lazy cost of the first snapshot is paid.
        XCTAssertEqual(try server.openEventStream("/posts/events").nextEvent(timeout: 10).name, "posts")
        let before = try residentKiB(server)

        var idle: [HTTPConnection] = []
        for _ in 0..<200 {
            let connection = try server.connect()
            var small: Int32 = 4096
            setsockopt(connection.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            connection.send("GET", "/posts/events")
            idle.append(connection)
        }
        // Streams open in order: once a later stream has its snapshot, the 200 have theirs queued.
        XCTAssertEqual(try server.openEventStream("/posts/events").nextEvent(timeout: 20).name, "posts")
        let after = try residentKiB(server)
        let perStream = Double(after - before) / 200
        print("200 non-reading streams on a 2 MB posts snapshot: RSS \(before) -> \(after) KiB, \(String(format: "%.1f", perStream)) KiB per stream")
        // Against the snapshot's size: a copy per stream (the bug) grows by the feed per stream;
        // shared, a stream holds a small fraction of it.
        XCTAssertLessThan(perStream * 1024, Double(feed.utf8.count) / 6, "RSS grew by \(after - before) KiB for 200 streams")
        XCTAssertEqual(idle.count, 200)
    }

    /// `tidings_open_streams` from `/metrics`.
    private func openStreams(_ server: TidingsProcess) throws -> Int? {
        let line = try server.get("/metrics").text.split(separator: "\n").first { $0.hasPrefix("tidings_open_streams ") }
        return line.flatMap { Int(Double($0.split(separator: " ")[1]) ?? -1) }
    }

    func test_a_stream_whose_client_stopped_reading_is_closed_after_four_silent_heartbeats() throws {
        var posts: [String] = []
        for index in 0..<36_000 {
            posts.append(#"{"id":\#(index),"title":"post \#(index)","body":"\#(String(repeating: "y", count: 160))"}"#)
        }
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts("[" + posts.joined(separator: ",") + "]")   // about 7 MB
        let server = try PostsFixture.server(upstream, timeout: 10, ["--heartbeat", "1"])
        defer { server.stop() }
        try server.settledPosts("loaded")
        let stuck = try server.connect()
        var small: Int32 = 4096
        setsockopt(stuck.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        stuck.send("GET", "/posts/events")
        // A reader alongside, which keeps reading (heartbeats) and so stays open.
        let reader = try server.openEventStream("/events?topics=preferences&keys=age")
        XCTAssertEqual(try reader.nextEvent().name, "preference")
        XCTAssertTrue(try eventually(within: 5) { try openStreams(server) == 2 })
        let opened = Date()
        XCTAssertTrue(try eventually(within: 15) { try openStreams(server) == 1 }, "the stuck stream was not closed")
        let after = Date().timeIntervalSince(opened)
        print("a stream that stopped reading was closed after \(String(format: "%.1f", after)) s (heartbeat 1 s)")
        XCTAssertGreaterThan(after, 2, "closed before it could have missed four heartbeats")
        // The reading stream is still served.
        XCTAssertEqual(try server.put("age", 44).status, 200)
        XCTAssertEqual(try reader.nextEvent(timeout: 5).value?["value"], 44)
    }
}
