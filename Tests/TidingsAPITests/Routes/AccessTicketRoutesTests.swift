import Foundation
import TestFixtures
import TidingsAPI
import TidingsTesting
import XCTest

/// Single-use stream tickets (`POST /stream-tickets`, `?ticket=`), in-process (see
/// `InProcessTidings`). Expiry and the purge of expired tickets are tested on an injected clock
/// (`StreamTicketStoreTests`), so no test waits the 60 s lifetime; the bounds per client address
/// and per credential, which need several source addresses, are `EndToEndTests.AccessTicketTests`.
final class AccessTicketRoutesTests: XCTestCase {
    /// 32 random bytes in unpadded base64url: 43 characters of its alphabet.
    static func isTicket(_ text: String) -> Bool {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return text.count == 43 && text.allSatisfy { alphabet.contains($0) }
    }

    private let api = "api-secret-0123456789"
    private let reader = "read-secret-9876543210"

    private func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

    private func ticket(_ server: InProcessTidings, token: String) throws -> (ticket: String, reply: HTTPReply) {
        let reply = try server.request("POST", "/stream-tickets", headers: bearer(token))
        XCTAssertEqual(reply.status, 201, reply.text)
        return (try XCTUnwrap(reply.json?["ticket"] as? String), reply)
    }

    func testTicketOpensOneStreamOnce() throws {
        let server = try InProcessTidings { $0.apiTokens.append(api); $0.readToken = reader }
        defer { server.stop() }

        // Issuing needs a read credential (read or api token).
        XCTAssertEqual(try server.request("POST", "/stream-tickets").status, 401)
        XCTAssertEqual(try server.request("POST", "/stream-tickets", headers: bearer("wrong")).status, 401)
        let (first, reply) = try ticket(server, token: reader)
        XCTAssertEqual(reply.json?["expiresIn"] as? Int, 60)
        XCTAssertEqual(reply.header("Cache-Control"), "no-store")
        XCTAssertEqual(reply.header("Content-Type"), "application/json")
        XCTAssertTrue(Self.isTicket(first), first)
        let (second, _) = try ticket(server, token: api)
        XCTAssertNotEqual(first, second)

        // First use opens the stream and it carries the snapshot.
        let stream = try server.openEventStream("/events?topics=preferences&keys=age&ticket=\(first)")
        XCTAssertEqual(stream.reply.status, 200)
        XCTAssertEqual(stream.reply.header("Content-Type"), "text/event-stream")
        let snapshot = try stream.nextEvent()
        XCTAssertEqual(snapshot.name, "preference")
        XCTAssertEqual(snapshot.json?["key"] as? String, "age")

        // Second use: 401 with a Bearer challenge.
        let reused = try server.get("/events?ticket=\(first)")
        XCTAssertEqual(reused.status, 401)
        XCTAssertEqual(reused.challenge()?.scheme, "Bearer")
        XCTAssertEqual(reused.challenge()?.parameters["error"], "invalid_token")

        // Unknown and malformed tickets.
        var forged = Array(second)
        forged[10] = forged[10] == "A" ? "B" : "A"
        XCTAssertEqual(try server.get("/events?ticket=\(String(forged))").status, 401)
        XCTAssertEqual(try server.get("/events?ticket=short").status, 401)
        XCTAssertEqual(try server.get("/events?ticket=").status, 401)
        // The forged variant did not burn the real one: it still opens a per-key stream.
        let perKey = try server.openEventStream("/preferences/age/events?ticket=\(second)")
        XCTAssertEqual(perKey.reply.status, 200)
        XCTAssertEqual(try perKey.nextEvent().json?["key"] as? String, "age")

        // A ticket is for event streams only.
        let (third, _) = try ticket(server, token: reader)
        XCTAssertEqual(try server.get("/preferences?ticket=\(third)").status, 401)
        // When Authorization is present it alone decides, even next to a good ticket.
        XCTAssertEqual(try server.get("/things/events?ticket=\(third)", headers: bearer("wrong")).status, 401)
        // ... and that did not consume it.
        let things = try server.openEventStream("/things/events?ticket=\(third)")
        XCTAssertEqual(things.reply.status, 200)

        // A ticket does not authorise writes.
        let (fourth, _) = try ticket(server, token: reader)
        XCTAssertEqual(try server.request("PUT", "/preferences/age?ticket=\(fourth)", json: ["value": 1]).status, 401)
    }

    func testOpenServerIssuesTicketsAndIgnoresThem() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        let reply = try server.request("POST", "/stream-tickets")
        XCTAssertEqual(reply.status, 201)
        XCTAssertTrue(Self.isTicket(reply.json?["ticket"] as? String ?? ""), reply.text)
        XCTAssertEqual(reply.json?["expiresIn"] as? Int, 60)
        // Streams need no credential here, so any ticket (or a reused one) is ignored.
        XCTAssertEqual(try server.openEventStream("/events?ticket=whatever").reply.status, 200)
        XCTAssertEqual(try server.openEventStream("/events?ticket=whatever").reply.status, 200)
    }

    func testApiTokenOnlyLeavesTicketsAndStreamsOpen() throws {
        let server = try InProcessTidings { $0.apiTokens.append(api) }
        defer { server.stop() }
        // Without --read-token a ticket grants nothing that is not already open.
        XCTAssertEqual(try server.request("POST", "/stream-tickets").status, 201)
        XCTAssertEqual(try server.openEventStream("/things/events").reply.status, 200)
    }

    /// One reader could take all 10,000 tickets, and everyone else got 503 for a minute.
}
