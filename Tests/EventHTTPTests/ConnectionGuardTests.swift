import HTTPTypes
import EventHTTP
import Foundation
import TestFixtures
import XCTest

/// The connection's reading paths on real sockets (the class keeps the name of the guard it
/// tested before the connection read requests itself): a clean head alone in a read; what
/// follows a clean head in the same read (a second request, its body, a head to refuse) is
/// framed in turn, answered in order.
final class ConnectionGuardTests: XCTestCase {
    private var server: LoopThread!

    override func setUpWithError() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.headerTimeout = 1
        server = try LoopThread(configuration: configuration) { server in
            server.router.get("/hello/{name}") { request, responder in
                responder.send(.json(["hello": request.parameters["name"]!]))
            }
            server.router.put("/echo") { request, responder in
                responder.send(.json(["body": String(decoding: request.body, as: UTF8.self)]))
            }
            server.router.post("/echo") { request, responder in
                responder.send(.json(["body": String(decoding: request.body, as: UTF8.self)]))
            }
        }
    }

    override func tearDown() { server.stop() }

    private func get(_ name: String) -> String { "GET /hello/\(name) HTTP/1.1\r\nHost: t\r\n\r\n" }

    private func put(_ body: String, method: String = "PUT") -> String {
        "\(method) /echo HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    private func assertHello(_ reply: HTTPReply?, _ name: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(reply?.status, 200, file: file, line: line)
        XCTAssertEqual(reply?.json?["hello"] as? String, name, file: file, line: line)
    }

    private func assertEcho(_ reply: HTTPReply?, _ body: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(reply?.status, 200, file: file, line: line)
        XCTAssertEqual(reply?.json?["body"] as? String, body, file: file, line: line)
    }

    func testCleanHeadsOneReadEachOnAKeptAliveConnection() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        for index in 0..<20 {
            client.write(get("n\(index)"))
            assertHello(try? client.readReply(), "n\(index)")
        }
    }

    /// A client that shuts its sending side once it sent its requests (`nc`, some scripts) still
    /// gets every answer, in order, and then the end of the connection.
    func testAClientDoneSendingStillGetsItsAnswers() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write(get("a") + put("{\"b\":1}") + get("c"))
        XCTAssertEqual(shutdown(client.fd, Int32(SHUT_WR)), 0)
        assertHello(try? client.readReply(), "a")
        assertEcho(try? client.readReply(), "{\"b\":1}")
        assertHello(try? client.readReply(), "c")
        XCTAssertTrue(client.waitForClose(), "the connection ends after the last answer")
    }

    func testPipelinedCleanHeadsInOneRead() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write(get("a") + get("b") + get("c"))
        assertHello(try? client.readReply(), "a")
        assertHello(try? client.readReply(), "b")
        assertHello(try? client.readReply(), "c")
        // And the connection goes on as usual.
        client.write(get("d"))
        assertHello(try? client.readReply(), "d")
    }

    func testCleanHeadThenAHeadToNormaliseInOneRead() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        // The second head is not in canonical form (two spaces after the colon).
        client.write(get("a") + "GET /hello/b HTTP/1.1\r\nHost:  t\r\n\r\n")
        assertHello(try? client.readReply(), "a")
        assertHello(try? client.readReply(), "b")
    }

    func testCleanHeadThenTheStartOfAnotherInOneRead() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        let second = get("b")
        let split = second.index(second.startIndex, offsetBy: 9)
        client.write(get("a") + second[..<split])
        assertHello(try? client.readReply(), "a")
        Thread.sleep(forTimeInterval: 0.05)
        client.write(String(second[split...]))
        assertHello(try? client.readReply(), "b")
    }

    func testCleanHeadWithItsWholeBodyInOneRead() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        for method in ["PUT", "POST"] {
            let body = #"{"value":"\#(method)"}"#
            client.write(put(body, method: method))
            assertEcho(try? client.readReply(), body)
        }
        client.write(get("after"))
        assertHello(try? client.readReply(), "after")
    }

    func testCleanHeadWithTheStartOfItsBodyInOneRead() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        let body = #"{"value":"in two pieces"}"#
        let whole = put(body)
        let split = whole.index(whole.endIndex, offsetBy: -7)
        client.write(String(whole[..<split]))
        Thread.sleep(forTimeInterval: 0.05)
        client.write(String(whole[split...]))
        assertEcho(try? client.readReply(), body)
        client.write(get("after"))
        assertHello(try? client.readReply(), "after")
    }

    func testCleanHeadAloneThenItsBodyInALaterRead() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        let body = #"{"value":"later"}"#
        let whole = put(body)
        let split = whole.index(whole.endIndex, offsetBy: -body.count)
        client.write(String(whole[..<split]))
        Thread.sleep(forTimeInterval: 0.05)
        client.write(String(whole[split...]) + get("after"))
        assertEcho(try? client.readReply(), body)
        assertHello(try? client.readReply(), "after")
    }

    func testBodyThatLooksLikeARequestStaysABody() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        let body = get("hidden")
        client.write(put(body))
        assertEcho(try? client.readReply(), body)
        client.write(get("next"))
        assertHello(try? client.readReply(), "next")
    }

    func testCleanHeadBodyAndNextRequestInOneRead() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        let body = #"{"value":1}"#
        client.write(put(body) + get("b") + put("xy"))
        assertEcho(try? client.readReply(), body)
        assertHello(try? client.readReply(), "b")
        assertEcho(try? client.readReply(), "xy")
    }

    func testBodyOnHeadIsDroppedWhenInTheSameRead() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        let smuggled = get("smuggled")
        client.write("HEAD /hello/a HTTP/1.1\r\nHost: t\r\nContent-Length: \(smuggled.utf8.count)\r\n\r\n\(smuggled)")
        let reply = try client.readReply(head: true)
        XCTAssertEqual(reply.header("Connection")?.lowercased(), "close")
        XCTAssertNil(try? client.readReply(), "the body was answered as a second request")
    }

    func testCleanHeadThenAnAmbiguousOneInOneRead() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        // Several clean requests first, so the refusal must be matched to the right request.
        client.write(get("a"))
        assertHello(try? client.readReply(), "a")
        client.write(get("b"))
        assertHello(try? client.readReply(), "b")
        let hidden = get("hidden")
        let ambiguous = "PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: \(2 + hidden.utf8.count)\r\n\r\nxy\(hidden)"
        client.write(get("c") + ambiguous)
        assertHello(try? client.readReply(), "c")
        let refused = try client.readReply()
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.header("Connection")?.lowercased(), "close")
        XCTAssertNil(try? client.readReply(), "a request behind the refused one was answered")
    }

    func testAmbiguousHeadAloneAfterCleanOnes() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        for name in ["a", "b", "c"] {
            client.write(get(name))
            assertHello(try? client.readReply(), name)
        }
        client.write("GET /hello/d HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip\r\n\r\n")
        let refused = try client.readReply()
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.header("Connection")?.lowercased(), "close")
        XCTAssertTrue(client.waitForClose(timeout: 2))
    }

    func testHeadTimeoutStillAppliesAfterCleanHeads() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write(get("a"))
        assertHello(try? client.readReply(), "a")
        // Empty lines, then an incomplete head: the clock runs from its first byte.
        client.write("\r\n")
        Thread.sleep(forTimeInterval: 0.05)
        client.write("GET /hello/b HTTP/1.1\r\nHost")
        let reply = try client.readReply()
        XCTAssertEqual(reply.status, 408)
        XCTAssertTrue(client.waitForClose(timeout: 2))
    }

    func testEmptyLinesThenACleanHeadStopTheClock() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write(get("a"))
        assertHello(try? client.readReply(), "a")
        client.write("\r\n")
        Thread.sleep(forTimeInterval: 0.05)
        client.write(get("b"))
        assertHello(try? client.readReply(), "b")
        // Past the head timeout: the connection is still fine.
        Thread.sleep(forTimeInterval: 1.3)
        client.write(get("c"))
        assertHello(try? client.readReply(), "c")
    }
}
