import Foundation
import TestFixtures
import TidingsAPI
import TidingsTesting
import XCTest

/// A server without `--api-token` (the default) cannot be written to by other sites' pages, and
/// a loopback server answers only to loopback host names (DNS rebinding). Before: a page could
/// `POST /things` as `x-www-form-urlencoded` or without a type (a CORS simple request, no
/// preflight) and got 201; any `Host` was served.
///
/// In-process (see `InProcessTidings`): the checks are the router's middleware, given the `Host`
/// and `Origin` a request names. That an HTTP/1.1 request has exactly one `Host` is the server's,
/// in `EndToEndTests.CrossSiteTests`.
final class CrossSiteRoutesTests: XCTestCase {
    /// The port a browser would name in `Host` and `Origin` (any: the check compares the two).
    private let port = 8080

    /// One request with exactly the given head lines (request line, then fields); returns the status.
    private func status(_ server: InProcessTidings, _ head: String, body: String = "") throws -> Int {
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            headers[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces)
        }
        return try server.request(String(requestLine[0]), String(requestLine[1]), headers: headers, body: Array(body.utf8)).status
    }

    func test_a_token_less_server_refuses_writes_from_another_sites_page() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        let evil = ["Origin": "https://evil.example"]
        let json = #"{"thing":"FROM-EVIL-PAGE"}"#
        for type in ["application/x-www-form-urlencoded", nil, "application/json"] as [String?] {
            var headers = evil
            if let type { headers["Content-Type"] = type }
            let reply = try server.request("POST", "/things", headers: headers, body: Array(json.utf8))
            assertProblem(reply, 403, "Content-Type \(type ?? "none")")
        }
        assertProblem(try server.request("POST", "/posts/cancel", headers: evil), 403)
        assertProblem(try server.request("PUT", "/preferences/age", headers: evil, json: ["value": 9]), 403)
        assertProblem(try server.request("DELETE", "/preferences/age", headers: ["Origin": "null"]), 403)
        XCTAssertEqual(try server.things(), [], "nothing was written")

        // The server's own page (same host and port) writes; so do tools that send no Origin.
        // (A browser's Host carries the port, as its Origin does.)
        let own = "Host: 127.0.0.1:\(port)\r\nOrigin: http://127.0.0.1:\(port)"
        XCTAssertEqual(try status(server, "POST /things HTTP/1.1\r\n\(own)\r\nContent-Type: application/json", body: #"{"thing":"own"}"#), 201)
        XCTAssertEqual(try server.request("POST", "/things", contentType: "application/x-www-form-urlencoded", text: #"{"thing":"curl"}"#).status, 201)
        XCTAssertEqual(try server.request("POST", "/things", contentType: nil, text: #"{"thing":"bare"}"#).status, 201)
        // A page of this server still needs the JSON type (a simple request is never JSON).
        XCTAssertEqual(try status(server, "POST /things HTTP/1.1\r\n\(own)\r\nContent-Type: text/plain", body: json), 415)
        XCTAssertEqual(try status(server, "POST /things HTTP/1.1\r\n\(own)\r\nContent-Type: application/x-www-form-urlencoded", body: json), 415)
        XCTAssertEqual(try status(server, "POST /things HTTP/1.1\r\n\(own)", body: json), 415)
        XCTAssertEqual(try server.things(), ["OWN", "CURL", "BARE"])
        // Reads are not writes: an evaluation from any page is answered (CORS decides what it sees).
        XCTAssertEqual(try server.request("POST", "/ofrep/v1/evaluate/flags/age", headers: evil.merging(["Content-Type": "application/json"]) { $1 },
                                          body: Array("{}".utf8)).status, 200)
    }

    func test_allowed_origins_write_with_the_JSON_type_and_tokens_make_the_check_unneeded() throws {
        let server = try InProcessTidings { $0.corsOrigins.append("https://app.example") }
        defer { server.stop() }
        let app = ["Origin": "https://app.example", "Content-Type": "application/json"]
        XCTAssertEqual(try server.request("POST", "/things", headers: app, body: Array(#"{"thing":"app"}"#.utf8)).status, 201)
        assertProblem(try server.request("POST", "/things", headers: ["Origin": "https://app.example", "Content-Type": "application/x-www-form-urlencoded"],
                                         body: Array(#"{"thing":"form"}"#.utf8)), 415)
        assertProblem(try server.request("POST", "/things", headers: ["Origin": "https://evil.example", "Content-Type": "application/json"],
                                         body: Array(#"{"thing":"evil"}"#.utf8)), 403)

        let guarded = try InProcessTidings { $0.apiTokens = ["secret"] }
        defer { guarded.stop() }
        let withToken = ["Origin": "https://evil.example", "Content-Type": "application/json", "Authorization": "Bearer secret"]
        XCTAssertEqual(try guarded.request("POST", "/things", headers: withToken, body: Array(#"{"thing":"t"}"#.utf8)).status, 201)
    }

    func test_a_loopback_server_answers_only_to_loopback_host_names() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        for host in ["127.0.0.1", "127.0.0.1:\(port)", "localhost", "LOCALHOST:\(port)", "app.localhost:\(port)", "[::1]:\(port)", "127.1.2.3"] {
            XCTAssertEqual(try status(server, "GET /preferences HTTP/1.1\r\nHost: \(host)"), 200, host)
        }
        for host in ["rebound.evil.example:\(port)", "evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "[::2]:\(port)", "10.0.0.1"] {
            XCTAssertEqual(try status(server, "GET /preferences HTTP/1.1\r\nHost: \(host)"), 421, host)
            XCTAssertEqual(try status(server, "GET /events HTTP/1.1\r\nHost: \(host)"), 421, "stream, \(host)")
            XCTAssertEqual(try status(server, "POST /things HTTP/1.1\r\nHost: \(host)\r\nContent-Type: application/json",
                                      body: #"{"thing":"rebound"}"#), 421, host)
        }
        XCTAssertEqual(try server.things(), [])
    }

    func test_a_server_on_all_interfaces_serves_any_host_name() throws {
        let server = try InProcessTidings { $0.host = "0.0.0.0" }
        defer { server.stop() }
        XCTAssertEqual(try status(server, "GET /preferences HTTP/1.1\r\nHost: tidings.example.com"), 200)
    }
}
