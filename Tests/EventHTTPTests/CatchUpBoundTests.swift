import EventHTTP
import Foundation
import TestFixtures
import XCTest

/// Paced output (a snapshot, a replay page) has a bound and a deadline of its own
/// (`CatchUpBound`): a client that reads it at a trickle is closed at the deadline, one that
/// lets batches pile up is closed past twice the largest, and a client reading alongside is
/// never held up or cut off. Heartbeats are off, so the stall rule cannot be what closes them.
final class CatchUpBoundTests: XCTestCase {
    private func startServer(deadline: Double, bytesPerSecond: Int = 64 << 10) throws -> LoopThread {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.heartbeatInterval = 0
        configuration.maxUnsentBytesPerStream = 64 << 10
        configuration.catchUpDeadline = deadline
        configuration.catchUpMinimumBytesPerSecond = bytesPerSecond
        configuration.streamWorkers = 1
        return try LoopThread(configuration: configuration) { server in
            server.router.get("/stream") { _, responder in
                guard let stream = responder.startEventStream(retryMilliseconds: 1500) else { return }
                StreamBook.shared(server).add(stream)
            }
        }
    }

    /// Opens a stream and waits until the server holds `count` streams; `receiveBuffer` small
    /// keeps the kernel from taking what the client does not read.
    private func openStream(_ server: LoopThread, count: Int, receiveBuffer: Int32? = nil) throws -> HTTPConnection {
        let client = try HTTPConnection(port: server.port, timeout: 30)
        if let receiveBuffer { client.setReceiveBuffer(receiveBuffer) }
        client.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertTrue(server.eventually { $0.openStreamCount == count })
        return client
    }

    private func pacedBatch(_ name: String, kibibytes: Int) -> [[UInt8]] {
        let chunk = ServerSentEvent(event: name, data: String(repeating: "s", count: 16 << 10)).encoded
        return Array(repeating: chunk, count: kibibytes / 16)
    }

    func test_a_client_reading_a_snapshot_at_a_trickle_is_closed_at_the_deadline() throws {
        // 1 s + 1 MiB at 256 KiB/s: due 5 s after it was queued. The trickle (20 KiB/s) would need 50 s.
        let server = try startServer(deadline: 1, bytesPerSecond: 256 << 10)
        defer { server.stop() }
        let trickle = try openStream(server, count: 1, receiveBuffer: 4096)
        let reader = try openStream(server, count: 2)
        let queued = Date()
        server.sync { server in
            for stream in StreamBook.shared(server).streams { stream.sendPaced(self.pacedBatch("snapshot", kibibytes: 1024)) }
        }
        let closedAfter = UncheckedBox<Double?>(nil)
        let done = DispatchSemaphore(value: 0)
        let fd = trickle.fd
        Thread.detachNewThread {
            var chunk = [UInt8](repeating: 0, count: 2048)
            while Date().timeIntervalSince(queued) < 30 {
                let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { closedAfter.value = Date().timeIntervalSince(queued); break }
                usleep(100_000)
            }
            done.signal()
        }
        var snapshots = 0
        while snapshots < 64, reader.readUntil("event: snapshot\n", timeout: 10) != nil { snapshots += 1 }
        XCTAssertEqual(snapshots, 64, "the reader got the whole snapshot")
        XCTAssertTrue(server.eventually(timeout: 15) { $0.openStreamCount == 1 }, "the trickling stream was never closed")
        let after = Date().timeIntervalSince(queued)
        print("a stream reading a 1 MiB snapshot at ~20 KiB/s was closed after \(String(format: "%.1f", after)) s (due at 5 s)")
        XCTAssertGreaterThan(after, 4.5, "closed before its deadline")
        XCTAssertLessThan(after, 7.5, "closed long after its deadline (the sweep runs every second)")
        // The client sees its end once it drained what the kernels still held.
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        XCTAssertNotNil(closedAfter.value, "the trickling client never saw its stream end")
        server.sync { StreamBook.shared($0).sendAll(ServerSentEvent(event: "live", data: "1").encoded) }
        XCTAssertNotNil(reader.readUntil("event: live\n"), "the reader is still served")
    }

    func test_a_client_that_lets_paced_batches_pile_up_is_closed_past_twice_the_largest() throws {
        let server = try startServer(deadline: 0)   // no deadline: only the byte bound
        defer { server.stop() }
        let stuck = try openStream(server, count: 1, receiveBuffer: 4096)
        let reader = try openStream(server, count: 2)
        func sendBatch(_ name: String) {
            server.sync { server in
                for stream in StreamBook.shared(server).streams { stream.sendPaced(self.pacedBatch(name, kibibytes: 512)) }
            }
            var got = 0
            while got < 32, reader.readUntil("event: \(name)\n", timeout: 10) != nil { got += 1 }
            XCTAssertEqual(got, 32, name)
        }
        // One batch of 512 KiB (allowance 1 MiB): kept, however long the client takes.
        sendBatch("first")
        XCTAssertEqual(server.sync { $0.openStreamCount }, 2, "a stream was closed for one snapshot")
        // A second and a third pile up behind it: past 1 MiB, closed.
        sendBatch("second")
        sendBatch("third")
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 }, "the stream holding three batches was not closed")
        XCTAssertTrue(stuck.waitForClose(timeout: 5), "the client did not see its stream end")
        server.sync { StreamBook.shared($0).sendAll(ServerSentEvent(event: "live", data: "1").encoded) }
        XCTAssertNotNil(reader.readUntil("event: live\n"), "the reader is still served")
    }
}
