import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Slow and greedy clients against the real binary: a request head has a deadline from its
/// first byte however slowly it trickles, and connections count against the caps from accept,
/// before they send anything.
final class SlowClientTests: XCTestCase {
    func test_a_trickled_head_gets_408_at_the_deadline_from_its_first_byte() throws {
        let server = try TidingsProcess(arguments: ["--header-timeout", "2"])
        defer { server.stop() }
        let connection = try server.connect(timeout: 10)
        let head = Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: \(String(repeating: "p", count: 40))\r\n\r\n".utf8)
        let started = Date()
        var reply: HTTPReply?
        // One byte every 100 ms: each byte restarted libevent's timer, so the head (about 7 s
        // of trickle) used to be served in full.
        for byte in head {
            connection.write([byte])
            connection.setTimeout(0.1)
            if let answer = try? connection.readReply() { reply = answer; break }
        }
        let elapsed = Date().timeIntervalSince(started)
        let refused = try XCTUnwrap(reply, "no answer before the head was complete")
        assertProblem(refused, 408)
        XCTAssertLessThan(elapsed, 4, "408 came \(elapsed) s after the first byte")
        XCTAssertGreaterThan(elapsed, 1.5, "408 came before the deadline")
        XCTAssertTrue(connection.waitForClose(timeout: 2))
    }

    func test_a_complete_head_sent_quickly_after_an_idle_connection_is_served() throws {
        let server = try TidingsProcess(arguments: ["--header-timeout", "1"])
        defer { server.stop() }
        let connection = try server.connect()
        // Idle time before the first byte does not count against the head's deadline.
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(try connection.request("GET", "/healthz").status, 200)
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertEqual(try connection.request("GET", "/healthz").status, 200, "keep-alive between requests is idle time too")
    }

    func test_connections_count_from_accept_against_the_per_client_cap() throws {
        let server = try TidingsProcess(arguments: ["--max-connections-per-client", "8"])
        defer { server.stop() }
        // Eight sockets that never send a byte hold every slot this address has.
        var idle = try (0..<8).map { _ in try server.connect(timeout: 5) }
        let ninth = try server.connect(timeout: 5)
        let refused = try ninth.readReply()
        assertProblem(refused, 503)
        XCTAssertEqual(refused.header("Retry-After"), "2")
        XCTAssertTrue(ninth.waitForClose(timeout: 2))
        // The held sockets are still served, and a freed slot is usable again.
        XCTAssertEqual(try idle[0].request("GET", "/healthz").status, 200)
        idle.removeLast()
        let deadline = Date().addingTimeInterval(5)
        var served = false
        while !served && Date() < deadline {
            let again = try server.connect(timeout: 5)
            served = (try? again.request("GET", "/healthz").status) == 200
            if !served { Thread.sleep(forTimeInterval: 0.05) }
        }
        XCTAssertTrue(served, "a slot freed by a closed connection was not given back")
    }
}
