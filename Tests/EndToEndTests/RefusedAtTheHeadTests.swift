import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// API.md "Refused at the head" through the real binary (issue 29; attack review 4, findings
/// 1, 2 and 8): what a head alone costs the server, and the answers decided before a body is
/// read. Measures memory and time: in SOLO_CLASSES.
final class RefusedAtTheHeadTests: XCTestCase {
    /// Opens `count` uploads that announce `length` and send `sent` bytes of it, then stop.
    private func unfinishedUploads(_ server: TidingsProcess, count: Int, announcing length: Int, sending sent: Int) throws -> [HTTPConnection] {
        var uploads: [HTTPConnection] = []
        let body = [UInt8](repeating: UInt8(ascii: " "), count: sent)
        for _ in 0..<count {
            let connection = try server.connect(timeout: 5)
            connection.write("PUT /preferences/name HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(length)\r\n\r\n")
            connection.write(body)
            uploads.append(connection)
        }
        return uploads
    }

    func test_unfinished_uploads_cost_what_arrived_and_over_limit_ones_nothing() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        XCTAssertEqual(try server.get("/healthz").status, 200)
        let before = try XCTUnwrap(ProcessStats.residentBytes(server.pid))
        // 100 uploads announcing 2.6 MB (over the 1 MiB limit), each with 200 KB sent: 413 at
        // the head, nothing of them held. (Before: 215 MiB for 100 such heads of 2.5 MB.)
        let over = try unfinishedUploads(server, count: 100, announcing: 2_600_000, sending: 200_000)
        for upload in over {
            upload.setTimeout(5)
            // The answer, or a reset when the unread body made the kernel drop it: never a wait.
            if let reply = try? upload.readReply() { XCTAssertEqual(reply.status, 413) }
        }
        XCTAssertEqual(try server.get("/healthz").status, 200)
        let afterOver = try XCTUnwrap(ProcessStats.residentBytes(server.pid))
        XCTAssertLessThanOrEqual(afterOver - before, 16 << 20, "the server grew \((afterOver - before) >> 20) MiB for 100 refused uploads")
        // 100 uploads within the limit (announcing 1,000,000), each 100 KB sent and then stalled:
        // the server holds what arrived, 10 MB, not the 100 MB announced.
        let within = try unfinishedUploads(server, count: 100, announcing: 1_000_000, sending: 100_000)
        usleep(500_000)
        XCTAssertEqual(try server.get("/healthz").status, 200)
        let after = try XCTUnwrap(ProcessStats.residentBytes(server.pid))
        print("RSS before \(before >> 20) MiB, after 100 refused uploads \(afterOver >> 20) MiB, after 100 stalled ones \(after >> 20) MiB")
        XCTAssertLessThanOrEqual(after - afterOver, 10_000_000 + (16 << 20),
                                 "the server grew \((after - afterOver) >> 20) MiB for 10 MB received of 100 MB announced")
        // The stalled uploads are still served when they finish.
        let tail = Array(#"{"value":"stalled"}"#.utf8)
        within[0].write([UInt8](repeating: UInt8(ascii: " "), count: 1_000_000 - 100_000 - tail.count) + tail)
        XCTAssertEqual(try within[0].readReply().status, 200)
        XCTAssertEqual(try server.get("/preferences/name").value?["value"], "stalled")
    }

    func test_a_write_without_its_credential_is_401_at_the_head_and_an_over_limit_one_413_at_once() throws {
        let server = try TidingsProcess(arguments: ["--api-token", "head-token"])
        defer { server.stop() }
        for (authorization, status) in [(nil, 401), ("Bearer wrong-token", 401)] as [(String?, Int)] {
            let connection = try server.connect(timeout: 2)
            let started = Date()
            connection.write("PUT /preferences/name HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             + (authorization.map { "Authorization: \($0)\r\n" } ?? "")
                             + "Expect: 100-continue\r\nContent-Length: 700000\r\n\r\n")
            let reply = try connection.readReply()
            assertProblem(reply, status)
            XCTAssertEqual(reply.challenge()?.scheme, "Bearer")
            XCTAssertLessThan(Date().timeIntervalSince(started), 0.1, "decided at the head, with no 100 Continue")
        }
        for expect in [false, true] {
            let connection = try server.connect(timeout: 2)
            let started = Date()
            connection.write("PUT /preferences/name HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer head-token\r\n"
                             + (expect ? "Expect: 100-continue\r\n" : "") + "Content-Length: 1300001\r\n\r\n")
            assertProblem(try connection.readReply(), 413)
            XCTAssertLessThan(Date().timeIntervalSince(started), 0.1, "expect \(expect)")
        }
        // With the token, the body is invited and read.
        let connection = try server.connect(timeout: 2)
        let body = Array(#"{"value": "headed"}"#.utf8)
        connection.write("PUT /preferences/name HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer head-token\r\nContent-Type: application/json\r\n"
                         + "Expect: 100-continue\r\nContent-Length: \(body.count)\r\n\r\n")
        XCTAssertEqual(try connection.readHead().status, 100)
        connection.write(body)
        XCTAssertEqual(try connection.readReply().status, 200)
    }

    func test_a_coded_request_body_is_415_and_a_port_out_of_range_400() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        for coding in ["gzip", "br, deflate"] {
            let reply = try server.request("PUT", "/preferences/name", headers: ["Content-Type": "application/json", "Content-Encoding": coding],
                                           body: Array(#"{"value": "zipped"}"#.utf8))
            assertProblem(reply, 415)
        }
        XCTAssertEqual(try server.get("/preferences/name").value?["value"], "fat", "nothing was written")
        let connection = try server.connect(timeout: 2)
        connection.write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:99999999\r\n\r\n")
        assertProblem(try connection.readReply(), 400)
    }
}
