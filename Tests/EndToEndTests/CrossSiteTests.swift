import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// A server without `--api-token` (the default) cannot be written to by other sites' pages, and
/// a loopback server answers only to loopback host names (DNS rebinding). Before: a page could
/// `POST /things` as `x-www-form-urlencoded` or without a type (a CORS simple request, no
/// preflight) and got 201; any `Host` was served.
///
/// Here what needs the server's request reader: exactly one `Host` on HTTP/1.1. The middleware's
/// rules run in-process (`TidingsAPITests.CrossSiteRoutesTests`).
final class CrossSiteTests: XCTestCase {
    /// One raw request with exactly the given head lines; returns the status.
    private func status(_ server: TidingsProcess, _ head: String, body: String = "") throws -> Int {
        let connection = try server.connect()
        var text = head + "\r\n"
        if !body.isEmpty { text += "Content-Length: \(body.utf8.count)\r\n" }
        connection.write(text + "Connection: close\r\n\r\n" + body)
        return try connection.readReply().status
    }

    func test_an_HTTP_1_1_request_needs_exactly_one_Host() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        XCTAssertEqual(try status(server, "GET /preferences HTTP/1.1"), 400)
        XCTAssertEqual(try status(server, "GET /preferences HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example"), 400)
        XCTAssertEqual(try status(server, "GET /preferences HTTP/1.1\r\nHost: evil.example\r\nHost: 127.0.0.1"), 400)
        XCTAssertEqual(try status(server, "GET /preferences HTTP/1.0"), 200, "HTTP/1.0 may omit Host")
    }
}
