import EventHTTP
import Foundation
import TestFixtures
import XCTest

/// Streams on their own workers: the bound, conflation, HTTP/1.0, client uploads, descriptors.
final class StreamWorkerTests: XCTestCase {
    private func startServer(bound: Int = 64 << 10, workers: Int = 2, heartbeat: Double = 0) throws -> LoopThread {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.retryJitter = 0   // exact `retry: 3000` below
        configuration.heartbeatInterval = heartbeat
        configuration.maxUnsentBytesPerStream = bound
        configuration.streamWorkers = workers
        return try LoopThread(configuration: configuration) { server in
            server.router.get("/hello/{name}") { request, responder in
                responder.send(.json(["hello": request.parameters["name"]!]))
            }
            server.router.get("/stream") { request, responder in
                let conflate = request.query("conflate") == "true"
                guard let stream = responder.startEventStream(retryMilliseconds: 1500, conflate: conflate) else { return }
                StreamBook.shared(server).add(stream)
            }
        }
    }

    private func openStream(_ server: LoopThread, _ target: String = "/stream", receiveBuffer: Int32? = nil) throws -> HTTPConnection {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        if let receiveBuffer { client.setReceiveBuffer(receiveBuffer) }
        client.write("GET \(target) HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertNotNil(client.readUntil("retry: 1500\n\n"), "stream head")
        return client
    }

    func testAFrameLargerThanTheBoundNeverCutsOffAReaderAtFullSpeed() throws {
        let server = try startServer(bound: 64 << 10)
        defer { server.stop() }
        let client = try openStream(server)
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 })
        // 16 times the bound, then small live frames queued behind it.
        let big = ServerSentEvent(event: "big", data: String(repeating: "b", count: 1 << 20)).encoded
        for round in 0..<3 {
            server.sync { server in
                let book = StreamBook.shared(server)
                book.sendAll(big)
                for index in 0..<20 { book.sendAll(ServerSentEvent(event: "small", data: "\(round)-\(index)").encoded) }
            }
            XCTAssertNotNil(client.readUntil("event: small\ndata: \(round)-19\n\n", timeout: 10), "round \(round)")
        }
        XCTAssertEqual(server.sync { StreamBook.shared($0).closedCount }, 0, "a reader was cut off")
        XCTAssertEqual(server.sync { $0.openStreamCount }, 1)
    }

    func testAConflatingStreamThatReadsNothingEndsWithTheLatestValues() throws {
        let server = try startServer(bound: 64 << 10)
        defer { server.stop() }
        let client = try openStream(server, "/stream?conflate=true", receiveBuffer: 4096)
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 })
        // 3,000 changes over 10 keys, ~600 bytes each (1.8 MB, 28 times the bound), in many
        // batches, while the client reads nothing.
        let pad = String(repeating: "p", count: 560)
        for batch in 0..<300 {
            server.sync { server in
                for index in (batch * 10 + 1)...(batch * 10 + 10) {
                    let frame = ServerSentEvent(id: "\(index)", event: "v", data: "{\"k\":\(index % 10),\"n\":\(index),\"pad\":\"\(pad)\"}").encoded
                    StreamBook.shared(server).streams.first?.send(frame, conflationKey: "k\(index % 10)")
                }
            }
        }
        XCTAssertEqual(server.sync { StreamBook.shared($0).closedCount }, 0, "a conflating stream was cut off")
        // A 4 KiB receive buffer set after connecting can leave the sender in a retransmission
        // backoff (seen: 13 s) before the stream flows again.
        let text = try XCTUnwrap(client.readUntil("\"n\":3000,", timeout: 40)) + (client.readUntil("\n\n") ?? "")
        var ids: [Int] = [], latest: [Int: Int] = [:]
        for line in Self.lines(text) {
            if line.hasPrefix("id: "), let id = Int(line.dropFirst(4)) { ids.append(id) }
            if line.hasPrefix("data: "), let json = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any],
               let key = json["k"] as? Int, let n = json["n"] as? Int { latest[key] = n }
        }
        XCTAssertEqual(ids, ids.sorted(), "ids not increasing")
        XCTAssertEqual(Set(ids).count, ids.count, "an id twice")
        XCTAssertLessThan(ids.count, 3000, "nothing was conflated")
        for key in 0..<10 { XCTAssertEqual(latest[key], 2990 + (key == 0 ? 10 : key), "key \(key)") }
        XCTAssertEqual(server.sync { $0.openStreamCount }, 1)
    }

    /// An idle stream's heartbeat goes straight to the socket, framed once for every stream
    /// (`StreamWorker.beat`): exactly one chunk on HTTP/1.1, the bare comment on HTTP/1.0, at
    /// every beat.
    func testHeartbeatsAreOneChunkOnHTTP11AndBareOnHTTP10() throws {
        let server = try startServer(heartbeat: 0.2)
        defer { server.stop() }
        let chunked = try openStream(server)
        XCTAssertEqual(chunked.readUntil(": keep-alive\n\n\r\n"), "\r\ne\r\n: keep-alive\n\n\r\n",
                       "the retry chunk's end, then the heartbeat as one chunk")
        XCTAssertEqual(chunked.readUntil(": keep-alive\n\n\r\n"), "e\r\n: keep-alive\n\n\r\n", "the next beat")
        let bare = try HTTPConnection(port: server.port, timeout: 5)
        bare.write("GET /stream HTTP/1.0\r\n\r\n")
        XCTAssertNotNil(bare.readUntil("retry: 1500\n\n"), "stream head")
        XCTAssertEqual(bare.readUntil(": keep-alive\n\n"), ": keep-alive\n\n")
        XCTAssertEqual(bare.readUntil(": keep-alive\n\n"), ": keep-alive\n\n", "the next beat")
        XCTAssertEqual(server.sync { $0.openStreamCount }, 2, "both readers kept")
    }

    func testAnHTTP10StreamIsCloseDelimited() throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write("GET /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let head = try XCTUnwrap(client.readUntil("retry: 1500\n\n"))
        let raw = try XCTUnwrap(HTTPReply.parse(raw: head), head)
        XCTAssertEqual(raw.version, "HTTP/1.0")
        XCTAssertEqual(raw.reply.status, 200)
        XCTAssertEqual(raw.reply.text, "retry: 1500\n\n", "the body is not chunked: \(head)")
        XCTAssertEqual(raw.reply.header("Connection"), "close", head)
        XCTAssertNil(raw.reply.header("Content-Length"), head)
        XCTAssertNil(raw.reply.header("Transfer-Encoding"), head)
        XCTAssertEqual(raw.reply.header("Content-Type"), "text/event-stream", head)
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 })
        let frame = ServerSentEvent(id: "7", event: "hello", data: "1").encoded
        server.sync { StreamBook.shared($0).sendAll(frame) }
        XCTAssertEqual(client.readUntil("data: 1\n\n"), String(decoding: frame, as: UTF8.self))
        server.sync { StreamBook.shared($0).streams.first?.end() }
        XCTAssertTrue(client.waitForClose(), "an HTTP/1.0 stream ends by closing")
        XCTAssertTrue(server.eventually { StreamBook.shared($0).closedCount == 1 && $0.openStreamCount == 0 })
    }

    func testBytesUploadedOnAStreamAreDiscarded() throws {
        let server = try startServer()
        defer { server.stop() }
        let client = try openStream(server)
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 })
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(client.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let block = [UInt8](repeating: 120, count: 1 << 20)
        func upload(_ total: Int) -> Int {
            var sent = 0
            while sent < total {
                let n = block.withUnsafeBytes { send(client.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { break }
                sent += n
            }
            return sent
        }
        // 16 MiB first, so the socket buffers and the allocator have settled (their size is the
        // host's), then 256 MiB more; the server must read and drop it as it comes, so the
        // second upload leaves a small fraction of itself behind (kept, it is all of it).
        XCTAssertEqual(upload(16 << 20), 16 << 20, "the server stopped reading what the client sends")
        let before = try XCTUnwrap(ProcessStats.residentBytes())
        let sent = upload(256 << 20)
        XCTAssertEqual(sent, 256 << 20, "the server stopped reading what the client sends")
        let grown = try XCTUnwrap(ProcessStats.residentBytes()) - before
        XCTAssertLessThan(grown, sent / 8, "memory grew by \(grown >> 20) MiB for \(sent >> 20) MiB uploaded")
        server.sync { StreamBook.shared($0).sendAll(ServerSentEvent(event: "after", data: "upload").encoded) }
        XCTAssertNotNil(client.readUntil("event: after\ndata: upload\n\n"))
    }

    /// Streams come and go by the thousand while frames are written and plain requests are
    /// answered: no worker may ever write into a descriptor number that now belongs to
    /// another connection (plain answers stay clean, long-lived streams get exactly theirs).
    func testNoDescriptorIsReusedUnderALiveStream() throws {
        let server = try startServer(workers: 3)
        defer { server.stop() }
        let watchers = try (0..<4).map { _ in try openStream(server) }
        XCTAssertTrue(server.eventually { $0.openStreamCount == 4 })
        var sequence = 0
        for round in 0..<2_000 {
            let churn = try openStream(server)
            sequence += 1
            let number = sequence
            server.sync { StreamBook.shared($0).sendAll(ServerSentEvent(id: "\(number)", event: "n", data: "\(number)").encoded) }
            if round % 2 == 0 { _ = churn.readUntil("data: \(number)\n\n", timeout: 2) }
            if round % 20 == 0 {
                let reply = try XCTUnwrap(try? HTTPConnection(port: server.port, timeout: 5).request("GET", "/hello/r\(round)"), "round \(round)")
                XCTAssertEqual(reply.status, 200)
                XCTAssertEqual(reply.text, #"{"hello":"r\#(round)"}"#)
            }
        }
        for (index, watcher) in watchers.enumerated() {
            let text = try XCTUnwrap(watcher.readUntil("id: \(sequence)\nevent: n\ndata: \(sequence)\n\n", timeout: 10), "watcher \(index)")
            let ids = Self.lines(text).filter { $0.hasPrefix("id: ") }.compactMap { Int($0.dropFirst(4)) }
            XCTAssertTrue(ids == Array(1...sequence), "watcher \(index) saw foreign or missing frames: \(ids.count) ids, first \(ids.prefix(3))")
            XCTAssertEqual(Self.lines(text).filter { $0.split(separator: " ").first == "HTTP/1.1" }, [],
                           "watcher \(index) got another connection's bytes")
        }
        XCTAssertTrue(server.eventually(timeout: 10) { $0.openStreamCount == 4 })
    }

    /// Lines split on LF alone (Swift's `Character` split treats CR LF as one character).
    static func lines(_ text: String) -> [String] {
        text.utf8.split(separator: 10).map { String(decoding: $0.last == 13 ? $0.dropLast() : $0, as: UTF8.self) }
    }
}
