import HTTPTypes
import EventHTTP
import Foundation
import TestFixtures
import XCTest

final class HTTPServerTests: XCTestCase {
    private var server: LoopThread!

    override func setUpWithError() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.retryJitter = 0   // exact `retry: 3000` below
        configuration.heartbeatInterval = 0.3
        configuration.maxUnsentBytesPerStream = 256 << 10
        server = try LoopThread(configuration: configuration) { server in
            server.router.get("/hello/{name}") { request, responder in
                responder.send(.json(["hello": request.parameters["name"]!]))
            }
            server.router.put("/echo") { request, responder in
                struct Body: Codable { var value: Int }
                responder.send(.json(try request.decode(Body.self)))
            }
            server.router.post("/size") { request, responder in
                responder.send(.json(["bytes": request.body.count]))
            }
            server.router.get("/later") { _, responder in
                // Answer from another thread: the responder hops to the loop.
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.05) { responder.send(.json(["late": true])) }
            }
            server.router.get("/stream") { _, responder in
                guard let stream = responder.startEventStream(retryMilliseconds: 1500) else { return }
                StreamBook.shared(server).add(stream)
            }
            server.router.add(middleware: MarkAnswers())
        }
    }

    override func tearDown() { server.stop() }

    func testKeepAliveServesSeveralRequestsOnOneConnection() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        for name in ["a", "b%20c", "d"] {
            let reply = try client.request("GET", "/hello/\(name)")
            XCTAssertEqual(reply.status, 200)
            XCTAssertEqual(reply.header("Content-Type"), "application/json")
            XCTAssertEqual(reply.header("X-Filtered"), "1")
            XCTAssertEqual(reply.json?["hello"] as? String, name.removingPercentEncoding)
        }
        let late = try client.request("GET", "/later")
        XCTAssertEqual(late.json?["late"] as? Bool, true)
    }

    func testNotFoundAndMethodNotAllowedAreProblems() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        let missing = try client.request("GET", "/nope")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.header("Content-Type"), "application/problem+json")
        XCTAssertEqual(missing.json?["status"] as? Int, 404)
        let wrong = try client.request("DELETE", "/hello/x")
        XCTAssertEqual(wrong.status, 405)
        XCTAssertEqual(wrong.header("Allow"), "GET, HEAD, OPTIONS")
        XCTAssertEqual(wrong.json?["title"] as? String, "Method Not Allowed")
    }

    func testBodiesDecodeOrAnswer4xx() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        XCTAssertEqual(try client.request("PUT", "/echo", body: Array(#"{"value":5}"#.utf8)).json?["value"] as? Int, 5)
        XCTAssertEqual(try client.request("PUT", "/echo", body: Array("{".utf8)).status, 400)
        XCTAssertEqual(try client.request("PUT", "/echo", headers: ["Content-Type": "text/plain"], body: Array("{}".utf8)).status, 415)
    }

    func testTwoMebibyteBodyIs413() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        let reply = try client.request("POST", "/size", body: [UInt8](repeating: 65, count: 2 << 20))
        XCTAssertEqual(reply.status, 413)
        XCTAssertEqual(reply.json?["status"] as? Int, 413)
        // And a far larger announced body is refused before it is read.
        let other = try HTTPConnection(port: server.port, timeout: 5)
        other.write("POST /size HTTP/1.1\r\nHost: t\r\nContent-Length: 100000000\r\n\r\n")
        XCTAssertEqual(try other.readReply().status, 413)
        XCTAssertEqual(try HTTPConnection(port: server.port, timeout: 5).request("GET", "/hello/x").status, 200)
    }

    func testMalformedRequestsLeaveTheServerServing() throws {
        for garbage in ["GARBAGE\r\n\r\n", "GET /hello/x HTTP/1.1\r\nNoColonHere\r\n\r\n", "\u{1}\u{2}\u{3} / HTTP/9.9\r\n\r\n"] {
            let bad = try HTTPConnection(port: server.port, timeout: 2)
            bad.write(garbage)
            if let reply = try? bad.readReply() { XCTAssertGreaterThanOrEqual(reply.status, 400, garbage) }
        }
        XCTAssertEqual(try HTTPConnection(port: server.port, timeout: 5).request("GET", "/hello/ok").status, 200)
    }

    func testHeadAndOptions() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        let get = try client.request("GET", "/hello/abc")
        let head = try client.request("HEAD", "/hello/abc")
        XCTAssertEqual(head.status, 200)
        XCTAssertEqual(head.header("Content-Length"), get.header("Content-Length"))
        XCTAssertEqual(head.header("Content-Type"), "application/json")
        XCTAssertTrue(head.body.isEmpty)
        let options = try client.request("OPTIONS", "/hello/abc")
        XCTAssertEqual(options.status, 204)
        XCTAssertEqual(options.header("Allow"), "GET, HEAD, OPTIONS")
        // The connection still works after a HEAD (no stray body bytes).
        XCTAssertEqual(try client.request("GET", "/hello/z").json?["hello"] as? String, "z")
    }

    func testStreamGetsRetryHeartbeatAndEvents() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        let head = try XCTUnwrap(client.readUntil("retry: 1500\n\n"))
        let raw = try XCTUnwrap(HTTPReply.parse(raw: head), head)
        XCTAssertEqual(raw.version, "HTTP/1.1")
        XCTAssertEqual(raw.reply.status, 200)
        XCTAssertEqual(raw.reply.header("Content-Type"), "text/event-stream")
        XCTAssertEqual(raw.reply.headerList("Cache-Control"), ["no-cache", "no-transform"])
        XCTAssertEqual(raw.reply.header("X-Accel-Buffering"), "no")
        XCTAssertEqual(String(decoding: raw.payload, as: UTF8.self), "retry: 1500\n\n", head)
        XCTAssertNotNil(client.readUntil(": keep-alive\n\n", timeout: 2))
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 })
        let frame = ServerSentEvent(id: "1", event: "greeting", data: #"{"hi":1}"#).encoded
        server.sync { StreamBook.shared($0).sendAll(frame) }
        XCTAssertNotNil(client.readUntil("id: 1\nevent: greeting\ndata: {\"hi\":1}\n\n"))
    }

    func testClosingTheClientReleasesTheStream() throws {
        var client: HTTPConnection? = try HTTPConnection(port: server.port, timeout: 5)
        client!.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertNotNil(client!.readUntil("retry: 1500\n\n"))
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 })
        client = nil
        // Released by the close watch well within one heartbeat (0.3 s).
        XCTAssertTrue(server.eventually(timeout: 0.3) { $0.openStreamCount == 0 })
        XCTAssertTrue(server.eventually { StreamBook.shared($0).closedCount == 1 })
    }

    func testNonReadingClientIsCutOffWhileAnotherKeepsReceiving() throws {
        let stalled = try HTTPConnection(port: server.port, timeout: 5)
        stalled.setReceiveBuffer(4096)
        stalled.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        let reader = try HTTPConnection(port: server.port, timeout: 5)
        reader.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertNotNil(reader.readUntil("retry: 1500\n\n"))
        XCTAssertTrue(server.eventually { $0.openStreamCount == 2 })
        let frame = ServerSentEvent(event: "bulk", data: String(repeating: "x", count: 8 << 10)).encoded
        var cutOff = false
        for round in 0..<400 where !cutOff {
            server.sync { StreamBook.shared($0).sendAll(frame) }
            XCTAssertNotNil(reader.readUntil("event: bulk\n"), "round \(round)")
            cutOff = server.sync { $0.openStreamCount == 1 }
        }
        XCTAssertTrue(cutOff, "the stalled stream was never cut off")
        server.sync { StreamBook.shared($0).sendAll(ServerSentEvent(event: "after", data: "1").encoded) }
        XCTAssertNotNil(reader.readUntil("event: after\n"))
    }

    func testPacedCatchUpDoesNotTripTheBound() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertNotNil(client.readUntil("retry: 1500\n\n"))
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 })
        // 2 MiB of catch-up against a 256 KiB bound, then a live event that must come last.
        let chunk = ServerSentEvent(event: "replay", data: String(repeating: "r", count: 16 << 10)).encoded
        server.sync { server in
            let book = StreamBook.shared(server)
            book.streams.first?.sendPaced(Array(repeating: chunk, count: 128)) { book.pacedDone = true }
            book.sendAll(ServerSentEvent(event: "live", data: "1").encoded)
        }
        var replays = 0
        while replays < 128, client.readUntil("event: replay\n") != nil { replays += 1 }
        XCTAssertEqual(replays, 128)
        XCTAssertNotNil(client.readUntil("event: live\n"))
        XCTAssertTrue(server.eventually { StreamBook.shared($0).pacedDone && $0.openStreamCount == 1 })
    }

    func testShutdownEndsStreamsAndCompletes() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertNotNil(client.readUntil("retry: 1500\n\n"))
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 })
        let done = UncheckedBox(false)
        server.sync { $0.beginShutdown { done.value = true } }
        XCTAssertNotNil(client.readUntil("0\r\n\r\n"), "terminating chunk")
        XCTAssertTrue(server.eventually { _ in done.value })
        XCTAssertThrowsError(try HTTPConnection(port: server.port, timeout: 5).request("GET", "/hello/x"))
    }
}

/// Keeps the test's open streams (loop thread only), one book per server.
final class StreamBook {
    nonisolated(unsafe) private static var books: [ObjectIdentifier: StreamBook] = [:]
    static func shared(_ server: HTTPServer) -> StreamBook {
        if let book = books[ObjectIdentifier(server)] { return book }
        let book = StreamBook()
        books[ObjectIdentifier(server)] = book
        return book
    }

    var streams: [EventStream] = []
    var closedCount = 0
    var pacedDone = false

    func add(_ stream: EventStream) {
        streams.append(stream)
        stream.onClose = { [unowned self, unowned stream] in
            closedCount += 1
            streams.removeAll { $0 === stream }
        }
    }

    func sendAll(_ frame: [UInt8]) { for stream in streams { stream.send(frame) } }
}

final class ServerLimitsTests: XCTestCase {
    func testConnectionsOverTheCapGet503WithRetryAfter() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.retryJitter = 0   // exact `retry: 3000` below
        configuration.maxConnections = 2
        let server = try LoopThread(configuration: configuration) { server in
            server.router.get("/ok") { _, responder in responder.send(.json(["ok": true])) }
        }
        defer { server.stop() }
        let first = try HTTPConnection(port: server.port, timeout: 5), second = try HTTPConnection(port: server.port, timeout: 5)
        XCTAssertEqual(try first.request("GET", "/ok").status, 200)
        XCTAssertEqual(try second.request("GET", "/ok").status, 200)
        let third = try HTTPConnection(port: server.port, timeout: 5)
        let refused = try third.request("GET", "/ok")
        XCTAssertEqual(refused.status, 503)
        XCTAssertNotNil(refused.header("Retry-After"))
        XCTAssertEqual(refused.header("Content-Type"), "application/problem+json")
        XCTAssertTrue(third.waitForClose(timeout: 2))
        // Room again once a connection goes away.
        _ = consume first
        XCTAssertTrue(server.eventually { $0.openConnectionCount == 1 })
        XCTAssertEqual(try HTTPConnection(port: server.port, timeout: 5).request("GET", "/ok").status, 200)
    }

    /// libevent's connection timeout (whose -1 means "default", not "never") must close idle
    /// keep-alive connections but never a quiet event stream.
    func testConnectionTimeoutClosesIdleConnectionsButNotQuietStreams() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.retryJitter = 0   // exact `retry: 3000` below
        configuration.idleTimeout = 0.4
        configuration.readTimeout = 0.4
        configuration.heartbeatInterval = 0
        let server = try LoopThread(configuration: configuration) { server in
            server.router.get("/ok") { _, responder in responder.send(.json(["ok": true])) }
            server.router.get("/stream") { _, responder in
                guard let stream = responder.startEventStream() else { return }
                StreamBook.shared(server).add(stream)
            }
        }
        defer { server.stop() }
        let idle = try HTTPConnection(port: server.port, timeout: 5)
        XCTAssertEqual(try idle.request("GET", "/ok").status, 200)
        let streaming = try HTTPConnection(port: server.port, timeout: 5)
        streaming.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertNotNil(streaming.readUntil("retry: 3000\n\n"))
        XCTAssertTrue(idle.waitForClose(timeout: 3), "idle keep-alive connection not timed out")
        usleep(600_000)
        XCTAssertEqual(server.sync { $0.openStreamCount }, 1, "quiet stream dropped by the connection timeout")
        server.sync { StreamBook.shared($0).sendAll(ServerSentEvent(event: "still", data: "here").encoded) }
        XCTAssertNotNil(streaming.readUntil("event: still\n"))
    }

    func testStreamsOverCapacityGet200RetryAndEnd() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maxStreams = 1
        let server = try LoopThread(configuration: configuration) { server in
            server.router.get("/stream") { _, responder in
                guard let stream = responder.startEventStream() else { return }
                StreamBook.shared(server).add(stream)
            }
        }
        defer { server.stop() }
        let first = try HTTPConnection(port: server.port, timeout: 5)
        first.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertNotNil(first.readUntil("retry: "))
        let second = try HTTPConnection(port: server.port, timeout: 5)
        let reply = try second.request("GET", "/stream")
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.header("Content-Type"), "text/event-stream")
        let retry = Int(reply.text.replacingOccurrences(of: "retry: ", with: "").trimmingCharacters(in: .whitespacesAndNewlines))
        XCTAssertNotNil(retry)
        XCTAssertTrue((1_500...4_500).contains(retry ?? 0), "the base 3 s ±50%: \(reply.text)")
        XCTAssertEqual(server.sync { $0.openStreamCount }, 1)
        let head = try HTTPConnection(port: server.port, timeout: 5).request("HEAD", "/stream")
        XCTAssertEqual(head.header("Content-Type"), "text/event-stream")
    }

    /// Streams never take the reserved connections: with streams at their share, a plain
    /// request (say, the write that feeds every stream) still gets through.
    func testStreamsLeaveReservedConnectionsForPlainRequests() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.retryJitter = 0   // exact `retry: 3000` below
        configuration.maxConnections = 4
        configuration.reservedConnections = 2
        let server = try LoopThread(configuration: configuration) { server in
            server.router.get("/stream") { _, responder in
                guard let stream = responder.startEventStream() else { return }
                StreamBook.shared(server).add(stream)
            }
            server.router.get("/ok") { _, responder in responder.send(.json(["ok": true])) }
        }
        defer { server.stop() }
        var open: [HTTPConnection] = []
        for _ in 0..<2 {
            let client = try HTTPConnection(port: server.port, timeout: 5)
            client.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
            XCTAssertNotNil(client.readUntil("retry: 3000\n\n"))
            open.append(client)
        }
        let refused = try HTTPConnection(port: server.port, timeout: 5).request("GET", "/stream")
        XCTAssertEqual(EventStreamText.fields(refused.text).first?.name, "retry", "a third stream is over the streams' share")
        XCTAssertEqual(refused.header("Connection"), "close", "a refusal ends: \(refused.text)")
        XCTAssertEqual(try HTTPConnection(port: server.port, timeout: 5).request("GET", "/ok").status, 200)
        XCTAssertEqual(server.sync { $0.openStreamCount }, 2)
        XCTAssertEqual(server.sync { $0.streamLimit }, 2)
        withExtendedLifetime(open) {}
    }
}

/// Router-wide middleware: marks every answer, routed or not.
private struct MarkAnswers: Middleware {
    func finish(_ request: Request, _ response: inout Response) {
        response.headers[HTTPField.Name("X-Filtered")!] = "1"
    }
}
