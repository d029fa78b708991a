import Foundation
import Synchronization
import XCTest
import TestFixtures
import TidingsTesting

/// Streams that never read, against a 2 MB posts feed, half of them gzip (whose snapshot is
/// deflated per stream, so not shared): the server's memory stays bounded while they pile up
/// (each gzip stream's piece used to keep a 2 MB buffer: +150 MB for these), every one of them
/// is closed (the heartbeat's stall rule — which used to miss a deflated snapshot small enough
/// to sit in the socket's buffers — the catch-up deadline and byte bound: see `CatchUpBound`),
/// a stream that reads keeps getting events, and `/healthz` stays prompt.
final class StuckStreamsMemoryTests: XCTestCase {
    private static let stuckStreams = 160

    func test_streams_that_never_read_a_2_MB_snapshot_are_bounded_and_closed() throws {
        let feed = PostsFixture.twoMegabyteFeed()
        XCTAssertGreaterThan(feed.utf8.count, 1_900_000)
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(feed)
        let server = try PostsFixture.server(upstream, timeout: 10, ["--heartbeat", "1"])
        defer { server.stop() }
        try server.settledPosts("loaded")
        // A reader of another topic alongside, opened first: it must keep getting its events.
        let reader = try server.openEventStream("/events?topics=preferences&keys=age")
        XCTAssertEqual(try reader.nextEvent().name, "preference")
        // One posts stream read to the end, so every lazy cost of the first snapshot is paid.
        XCTAssertEqual(try server.openEventStream("/posts/events").nextEvent(timeout: 10).name, "posts")
        let before = try XCTUnwrap(ProcessStats.peakResidentBytes(server.pid))

        let held = HeldConnections()
        let port = server.port
        let probe = try LoopResponsiveness.measure(server, clients: 2, seconds: 3) { _ in
            guard held.count < Self.stuckStreams else { usleep(20_000); return }
            let connection = try HTTPConnection(port: port)
            var small: Int32 = 4096
            setsockopt(connection.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            let gzip = held.count % 2 == 0
            connection.send("GET", "/posts/events", headers: gzip ? ["Accept-Encoding": "gzip"] : [:])
            held.append(connection)
        }
        XCTAssertGreaterThanOrEqual(held.count, Self.stuckStreams, "not every stuck stream was opened")
        // Streams open in order: once a later one has its snapshot, all of them have theirs queued.
        XCTAssertEqual(try server.openEventStream("/posts/events").nextEvent(timeout: 20).name, "posts")
        XCTAssertTrue(try eventually(within: 20) { try openStreams(server) == 1 },
                      "stuck streams still open: \(String(describing: try? openStreams(server)))")
        let after = try XCTUnwrap(ProcessStats.peakResidentBytes(server.pid))
        print("\(Self.stuckStreams) streams that never read a 2 MB snapshot: peak RSS \(before >> 10) -> \(after >> 10) KiB; \(probe.summary)")
        // Against the size of what they hold: a copy of the snapshot per gzip stream (the bug)
        // is half the streams times the feed; shared and bounded, the peak grows by a fraction.
        let copies = Self.stuckStreams / 2 * feed.utf8.count
        XCTAssertLessThan(after - before, copies / 3, "peak memory grew by \((after - before) >> 10) KiB")
        probe.assertResponsive()
        XCTAssertEqual(try server.put("age", 45).status, 200)
        XCTAssertEqual(try reader.nextEvent(timeout: 5).value?["value"], 45, "the reading stream is still served")
    }

    /// `tidings_open_streams` from `/metrics`.
    private func openStreams(_ server: TidingsProcess) throws -> Int? {
        let line = try server.get("/metrics").text.split(separator: "\n").first { $0.hasPrefix("tidings_open_streams ") }
        return line.flatMap { Int(Double($0.split(separator: " ")[1]) ?? -1) }
    }
}

/// Connections the attack threads keep open (each closes its socket when released).
private final class HeldConnections: Sendable {
    /// A connection only kept open, never used again: no thread touches it after `append`.
    private struct Kept: @unchecked Sendable { let connection: HTTPConnection }
    private let connections = Mutex<[Kept]>([])
    var count: Int { connections.withLock { $0.count } }
    func append(_ connection: HTTPConnection) { connections.withLock { $0.append(Kept(connection: connection)) } }
}
