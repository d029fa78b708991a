@testable import EventHTTP
import Foundation
import TestFixtures
import HTTPTypes
import XCTest

/// API.md "Refused at the head" (issue 29, attack review 4 findings 2 and 8), on a real server
/// over loopback: what can be decided from a head is decided there, before any of the body is
/// read — 413 for an announced length over the limit (instead of `100 Continue` too), a route's
/// 401, 415 for a coded body — and a chunked body is cut the moment it passes the limit.
/// Timed (answers within 100 ms of the head): in SOLO_CLASSES.
final class HeadRefusalTests: XCTestCase {
    private static let limit = 20_000

    /// A route group whose check wants `Authorization: Bearer k`, at the head too.
    private struct NeedsKey: Middleware {
        func intercept(_ request: Request) -> Response? {
            request.headers.first(.authorization) == "Bearer k" ? nil
                : .problem(status: .unauthorized, detail: "A key is needed.", headers: [.wwwAuthenticate: "Bearer"])
        }
        func checkHead(_ request: Request) -> Response? { intercept(request) }
    }

    private var server: LoopThread!

    override func setUpWithError() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maxBodySize = Self.limit
        server = try LoopThread(configuration: configuration) { server in
            server.router.post("/size") { request, responder in responder.send(.json(["bytes": request.body.count])) }
            server.router.group(NeedsKey()).put("/keyed") { request, responder in
                responder.send(.json(["bytes": request.body.count]))
            }
        }
    }

    override func tearDown() { server.stop() }

    /// Writes `head`, reads the first answer; its status and the seconds it took.
    private func answerToHead(_ head: String, on connection: HTTPConnection) throws -> (HTTPReply, Double) {
        let started = Date()
        connection.write(head)
        let reply = try connection.readReply()
        return (reply, Date().timeIntervalSince(started))
    }

    func testAnOverLimitLengthIs413AtTheHeadWithAndWithoutExpectContinue() throws {
        for (length, expect) in [(Self.limit + 1, false), (Self.limit * 3 + 17, true), (987_654_321, false), (Self.limit + 4_321, true)] {
            let connection = try HTTPConnection(port: server.port, timeout: 2)
            let head = "POST /size HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                + (expect ? "Expect: 100-continue\r\n" : "") + "Content-Length: \(length)\r\n\r\n"
            let (reply, seconds) = try answerToHead(head, on: connection)
            XCTAssertEqual(reply.status, 413, "\(length), expect \(expect): no 100 Continue, the refusal")
            XCTAssertEqual(reply.header("Content-Type"), "application/problem+json")
            XCTAssertEqual(reply.json?["status"] as? Int, 413)
            XCTAssertEqual(reply.header("Connection"), "close")
            XCTAssertLessThan(seconds, 0.1, "\(length): answered at the head, not after a body that never comes")
            XCTAssertTrue(connection.waitForClose(timeout: 2))
        }
        // At the limit it is read (and a 100 Continue invites it).
        let connection = try HTTPConnection(port: server.port, timeout: 2)
        connection.write("POST /size HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: \(Self.limit)\r\n\r\n")
        XCTAssertEqual(try connection.readHead().status, 100)
        connection.write([UInt8](repeating: 0x7B, count: Self.limit))
        XCTAssertEqual(try connection.readReply().json?["bytes"] as? Int, Self.limit)
    }

    func testAChunkedBodyIsCutTheMomentItPassesTheLimit() throws {
        let head = "POST /size HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
        // Exactly the limit, in two chunks: read.
        let exact = try HTTPConnection(port: server.port, timeout: 2)
        exact.write(head + "3000\r\n" + String(repeating: "a", count: 0x3000) + "\r\n")
        exact.write(String(Self.limit - 0x3000, radix: 16) + "\r\n" + String(repeating: "b", count: Self.limit - 0x3000) + "\r\n0\r\n\r\n")
        XCTAssertEqual(try exact.readReply().json?["bytes"] as? Int, Self.limit)
        // One byte more: 413 with that chunk, the body's end never sent.
        for split in [false, true] {
            let over = try HTTPConnection(port: server.port, timeout: 2)
            over.write(head + "3000\r\n" + String(repeating: "a", count: 0x3000) + "\r\n")
            let rest = Self.limit - 0x3000 + 1
            let started = Date()
            if split {
                // The size line says it all: refused before the chunk's data.
                over.write(String(rest, radix: 16) + "\r\n")
            } else {
                over.write(String(rest, radix: 16) + "\r\n" + String(repeating: "b", count: rest) + "\r\n")
            }
            let reply = try over.readReply()
            XCTAssertEqual(reply.status, 413, "split \(split)")
            XCTAssertEqual(reply.header("Content-Type"), "application/problem+json")
            XCTAssertLessThan(Date().timeIntervalSince(started), 0.1)
            XCTAssertTrue(over.waitForClose(timeout: 2))
        }
        XCTAssertTrue(server.eventually { $0.bufferedBodyBytes == 0 })
    }

    func testARouteThatNeedsACredentialAnswers401AtTheHead() throws {
        for authorization in [nil, "Bearer wrong"] {
            let connection = try HTTPConnection(port: server.port, timeout: 2)
            let head = "PUT /keyed HTTP/1.1\r\nHost: t\r\n" + (authorization.map { "Authorization: \($0)\r\n" } ?? "")
                + "Expect: 100-continue\r\nContent-Length: 15000\r\n\r\n"
            let (reply, seconds) = try answerToHead(head, on: connection)
            XCTAssertEqual(reply.status, 401, "\(authorization ?? "none"): the credential is decided at the head")
            XCTAssertEqual(reply.header("WWW-Authenticate"), "Bearer")
            XCTAssertEqual(reply.header("Connection"), "close")
            XCTAssertLessThan(seconds, 0.1)
            XCTAssertTrue(connection.waitForClose(timeout: 2))
        }
        XCTAssertEqual(server.sync { $0.bufferedBodyBytes }, 0)
        // With the key, the body is awaited and read.
        let keyed = try HTTPConnection(port: server.port, timeout: 2)
        keyed.write("PUT /keyed HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer k\r\nContent-Length: 15000\r\n\r\n")
        usleep(50_000)
        keyed.write([UInt8](repeating: 0x20, count: 15_000))
        XCTAssertEqual(try keyed.readReply().json?["bytes"] as? Int, 15_000)
        // A whole request without the key: the router's 401, as before.
        let whole = try HTTPConnection(port: server.port, timeout: 2).request("PUT", "/keyed", body: [0x20])
        XCTAssertEqual(whole.status, 401)
    }

    func testACodedRequestBodyIs415() throws {
        for coding in ["gzip", "br, deflate", "identity, gzip", "x-custom"] {
            let whole = try HTTPConnection(port: server.port, timeout: 2)
                .request("POST", "/size", headers: ["Content-Encoding": coding], body: Array("{}".utf8))
            XCTAssertEqual(whole.status, 415, coding)
            XCTAssertEqual(whole.header("Accept-Encoding"), "identity")
            XCTAssertEqual(whole.header("Content-Type"), "application/problem+json")
            // At the head when the body is still to come.
            let connection = try HTTPConnection(port: server.port, timeout: 2)
            let (reply, seconds) = try answerToHead("POST /size HTTP/1.1\r\nHost: t\r\nContent-Encoding: \(coding)\r\nContent-Length: 900\r\n\r\n",
                                                    on: connection)
            XCTAssertEqual(reply.status, 415, coding)
            XCTAssertLessThan(seconds, 0.1)
        }
        let plain = try HTTPConnection(port: server.port, timeout: 2)
            .request("POST", "/size", headers: ["Content-Encoding": "identity"], body: Array("{}".utf8))
        XCTAssertEqual(plain.json?["bytes"] as? Int, 2, "identity is no coding")
    }

    func testAHostPortOutOfRangeIs400() throws {
        func status(_ host: String) throws -> Int {
            let connection = try HTTPConnection(port: server.port, timeout: 2)
            connection.write("POST /size HTTP/1.1\r\nHost: \(host)\r\nContent-Length: 0\r\n\r\n")
            return try connection.readReply().status
        }
        for host in ["127.0.0.1:99999999", "127.0.0.1:65536", "[::1]:123456", "localhost:80a", "t:-1", "t:000000080"] {
            XCTAssertEqual(try status(host), 400, host)
        }
        for host in ["127.0.0.1:65535", "[::1]:8080", "t:", "t", "[::1]", "t:0"] {
            XCTAssertEqual(try status(host), 200, host)
        }
    }
}
