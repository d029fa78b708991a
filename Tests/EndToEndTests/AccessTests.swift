import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// openapi.yaml "Access", what needs the process: tokens from the environment, and that no token
/// ever reaches the log. The routes' rules run in-process (`TidingsAPITests.AccessRoutesTests`);
/// stream tickets are in `AccessTicketTests`.
final class AccessTests: XCTestCase {
    private let api = "api-secret-0123456789"
    private let reader = "read-secret-9876543210"

    private func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

    func testSeveralApiTokensAndEnvironmentVariables() throws {
        let server = try TidingsProcess(arguments: ["--api-token", api, "--api-token", "second-token"],
                                        environment: ["TIDINGS_READ_TOKEN": reader])
        defer { server.stop() }
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: bearer("second-token"), json: ["value": 1]).status, 200)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: bearer(api), json: ["value": 2]).status, 200)
        XCTAssertEqual(try server.get("/preferences").status, 401)
        XCTAssertEqual(try server.get("/preferences", headers: bearer(reader)).status, 200)
    }

    func testTokensAndTicketsNeverReachTheLog() throws {
        let server = try TidingsProcess(arguments: ["--api-token", api, "--read-token", reader, "--log-level", "trace"])
        defer { server.stop() }
        XCTAssertEqual(try server.get("/preferences", headers: bearer(reader)).status, 200)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", headers: bearer(api), json: ["value": 3]).status, 200)
        XCTAssertEqual(try server.get("/preferences", headers: bearer("guess-\(api)")).status, 401)
        let issued = try server.request("POST", "/stream-tickets", headers: bearer(reader))
        let ticket = try XCTUnwrap(issued.json?["ticket"] as? String)
        let stream = try server.openEventStream("/events?ticket=\(ticket)")
        XCTAssertEqual(stream.reply.status, 200)
        XCTAssertEqual(try server.get("/events?ticket=\(ticket)").status, 401)
        XCTAssertEqual(server.stop(), 0)
        let log = server.log
        XCTAssertFalse(log.isEmpty)
        for secret in [api, reader, ticket, "guess-\(api)"] {
            // substring: a secret must appear nowhere in the log, in whatever field or message.
            XCTAssertFalse(log.contains(secret), "secret in the log:\n\(log)")
        }
    }
}
