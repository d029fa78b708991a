import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Request framing, on raw sockets against the real binary: an ambiguous request is a 400
/// problem and the connection closes, so a request hidden in its body never runs; protocol
/// edges (versions, chunked bodies, `Expect`, encodings, query escapes) get problems, not
/// libevent's bare pages.
final class FramingTests: XCTestCase {
    private var server: TidingsProcess!

    override func setUpWithError() throws { server = try TidingsProcess() }
    override func tearDown() { server?.stop(); server = nil }

    /// Sends `raw` on a fresh connection; returns the first reply and whether the server then
    /// closed the connection (with nothing else on it).
    private func exchange(_ raw: String) throws -> (reply: HTTPReply, closed: Bool, rest: [UInt8]) {
        let connection = try server.connect(timeout: 5)
        connection.write(raw)
        let reply = try connection.readReply()
        var rest: [UInt8] = []
        connection.setTimeout(2)
        while let more = try? connection.readAnything() { rest += more }
        // readAnything throws `.closed` at EOF and `.timeout` while the connection stays open.
        let closed = connection.waitForClose(timeout: 0.2)
        return (reply, closed, rest)
    }

    func test_a_request_smuggled_behind_an_ambiguous_length_never_runs() throws {
        XCTAssertEqual(try server.post(thing: "victim").status, 201)
        let hidden = "DELETE /things/VICTIM HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        let body = #"{"value":"ab"}"#
        let heads = [
            // Two different lengths: libevent used the first and parsed the rest as a request.
            "Content-Length: \(body.utf8.count)\r\nContent-Length: \(body.utf8.count + hidden.utf8.count)\r\n",
            // Two equal lengths are refused too: any duplicate is ambiguous to some parser.
            "Content-Length: \(body.utf8.count)\r\nContent-Length: \(body.utf8.count)\r\n",
            "Content-Length : \(body.utf8.count)\r\n",
            "Content-Length: +\(body.utf8.count)\r\n",
            "Content-Length: \(body.utf8.count) \(body.utf8.count)\r\n",
            "Transfer-Encoding: gzip\r\n",
            "Transfer-Encoding: chunked, gzip\r\n",
            "Transfer-Encoding: chunked\r\nContent-Length: \(body.utf8.count)\r\n",
            "X Forwarded: 1\r\nContent-Length: \(body.utf8.count)\r\n",
            "Content-Length: \(body.utf8.count)\r\n folded: continuation\r\n",
        ]
        for head in heads {
            let raw = "PUT /preferences/name HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\(head)\r\n\(body)\(hidden)"
            let (reply, closed, rest) = try exchange(raw)
            assertProblem(reply, 400, head.debugDescription)
            XCTAssertEqual(reply.header("Connection")?.lowercased(), "close", head.debugDescription)
            XCTAssertTrue(closed, "connection left open after \(head.debugDescription)")
            XCTAssertTrue(rest.isEmpty, "a second answer followed \(head.debugDescription): \(String(decoding: rest, as: UTF8.self))")
        }
        XCTAssertEqual(try server.get("/things/VICTIM").status, 200, "the hidden DELETE ran")
        XCTAssertEqual(try server.get("/preferences/name").json?["value"] as? String, "fat", "the ambiguous PUT ran")
    }

    func test_HTTP_versions_other_than_1_0_and_1_1_are_505_problems() throws {
        for version in ["HTTP/99999999999.1", "HTTP/2.0", "HTTP/1.2", "HTTP/0.9"] {
            let (reply, closed, _) = try exchange("GET /healthz \(version)\r\nHost: 127.0.0.1\r\n\r\n")
            assertProblem(reply, 505, version)
            XCTAssertTrue(closed, version)
        }
        for version in ["HTTP/1.0", "HTTP/1.1"] {
            let (reply, _, _) = try exchange("GET /healthz \(version)\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            XCTAssertEqual(reply.status, 200, version)
        }
        let (malformed, _, _) = try exchange("GET /healthz HTTQ/1.1\r\n\r\n")
        assertProblem(malformed, 400)
        let (unknown, _, _) = try exchange("BREW /healthz HTTP/1.1\r\n\r\n")
        assertProblem(unknown, 501)
    }

    func test_malformed_chunked_bodies_are_400_and_chunk_extensions_are_accepted() throws {
        let head = "PUT /preferences/name HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        let malformed = [
            "zz\r\n{\"value\":\"a\"}\r\n0\r\n\r\n",      // size not hex
            "-d\r\n{\"value\":\"a\"}\r\n0\r\n\r\n",      // negative size
            "d\r\n{\"value\":\"a\"}0\r\n\r\n",          // data not followed by CRLF
            "d\n{\"value\":\"a\"}\n0\n\n",              // bare LF
            "+d\r\n{\"value\":\"a\"}\r\n0\r\n\r\n",      // signed size
            "d x\r\n{\"value\":\"a\"}\r\n0\r\n\r\n",     // junk after the size
        ]
        for body in malformed {
            let (reply, closed, _) = try exchange(head + body)
            assertProblem(reply, 400, body.debugDescription)
            XCTAssertTrue(closed, body.debugDescription)
        }
        // A valid extension, split chunks and a trailer, then a second request on the connection.
        let connection = try server.connect()
        connection.write(head + "5;name=value\r\n{\"val\r\n8 ; ext\r\nue\":\"ab\"\r\n1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n")
        let ok = try connection.readReply()
        XCTAssertEqual(ok.status, 200, ok.text)
        XCTAssertEqual(ok.json?["value"] as? String, "ab")
        XCTAssertEqual(try connection.request("GET", "/healthz").status, 200, "the connection stays usable")
        // Too large after de-chunking: a 413 problem, not libevent's page.
        let big = String(repeating: "a", count: 5 << 20)
        let (tooLarge, _, _) = try exchange(head + String(big.utf8.count, radix: 16) + "\r\n" + big + "\r\n0\r\n\r\n")
        assertProblem(tooLarge, 413)
    }

    func test_Expect_other_than_100_continue_is_a_417_problem_and_100_continue_works() throws {
        let (reply, closed, _) = try exchange("PUT /preferences/name HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\nContent-Length: 2\r\n\r\n{}")
        assertProblem(reply, 417)
        XCTAssertTrue(closed)

        let connection = try server.connect()
        connection.write("PUT /preferences/name HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n")
        XCTAssertEqual(try connection.readHead().status, 100, "the client waiting for 100 Continue gets it")
        connection.write("e\r\n{\"value\":\"xy\"}\r\n0\r\n\r\n")
        XCTAssertEqual(try connection.readReply().json?["value"] as? String, "xy")
    }

    func test_a_JSON_body_in_another_encoding_than_UTF8_is_400() throws {
        let json = #"{"value":"ab"}"#
        let utf16LE = Array(json.utf16).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let utf16BOM: [UInt8] = [0xFE, 0xFF] + Array(json.utf16).flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let utf32LE = Array(json.unicodeScalars).flatMap { scalar in (0..<4).map { UInt8(truncatingIfNeeded: scalar.value >> (8 * $0)) } }
        let latin1: [UInt8] = Array(#"{"value":""#.utf8) + [0xE9] + Array(#""}"#.utf8)
        for body in [utf16LE, utf16BOM, utf32LE, latin1] {
            assertProblem(try server.request("PUT", "/preferences/name", headers: ["Content-Type": "application/json"], body: body), 400)
        }
        XCTAssertEqual(try server.request("PUT", "/preferences/name", headers: ["Content-Type": "application/json"],
                                          body: Array(#"{"value":"Grüße"}"#.utf8)).status, 200)
    }

    func test_a_query_with_a_broken_percent_escape_is_400() throws {
        for target in ["/preferences/events?keys=%", "/preferences/events?keys=%zz", "/posts?wait=%E", "/healthz?x=%C3%28"] {
            assertProblem(try server.get(target), 400, target)
        }
        XCTAssertEqual(try server.get("/healthz?x=%20ok").status, 200)
    }

    func test_a_head_larger_than_the_limit_is_a_431_problem() throws {
        let (reply, closed, _) = try exchange("GET /healthz HTTP/1.1\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n")
        assertProblem(reply, 431)
        XCTAssertTrue(closed)
    }
}
