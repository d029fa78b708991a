import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Single-use stream tickets (`POST /stream-tickets`, `?ticket=`) against the real server.
/// Expiry and the purge of expired tickets are tested in-process on an injected clock
/// (Tests/TidingsAPITests/StreamTicketStoreTests), so no test waits the 60 s lifetime.
final class AccessTicketTests: XCTestCase {
    private let api = "api-secret-0123456789"
    private let reader = "read-secret-9876543210"

    private func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

    private func ticket(_ server: TidingsProcess, token: String) throws -> (ticket: String, reply: HTTPReply) {
        let reply = try server.request("POST", "/stream-tickets", headers: bearer(token))
        XCTAssertEqual(reply.status, 201, reply.text)
        return (try XCTUnwrap(reply.json?["ticket"] as? String), reply)
    }

    func testTicketOpensOneStreamOnce() throws {
        let server = try TidingsProcess(arguments: ["--api-token", api, "--read-token", reader])
        defer { server.stop() }

        // Issuing needs a read credential (read or api token).
        XCTAssertEqual(try server.request("POST", "/stream-tickets").status, 401)
        XCTAssertEqual(try server.request("POST", "/stream-tickets", headers: bearer("wrong")).status, 401)
        let (first, reply) = try ticket(server, token: reader)
        XCTAssertEqual(reply.json?["expiresIn"] as? Int, 60)
        XCTAssertEqual(reply.header("Cache-Control"), "no-store")
        XCTAssertEqual(reply.header("Content-Type"), "application/json")
        XCTAssertNotNil(first.range(of: "^[A-Za-z0-9_-]{43}$", options: .regularExpression), first)
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
        XCTAssertTrue(reused.header("WWW-Authenticate")?.contains(#"error="invalid_token""#) == true)

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

    func testOutstandingTicketsAreBounded() throws {
        // One credential holds at most a quarter of the 10,000 tickets, whatever addresses it
        // comes from (each of which holds at most 64).
        let server = try TidingsProcess(arguments: ["--read-token", reader], environment: ["TIDINGS_API_TOKEN": api])
        defer { server.stop() }
        let (first, _) = try ticket(server, token: reader)
        var issued = 1
        var refusal: HTTPReply?
        for address in 2..<50 where refusal == nil {
            let connection = try HTTPConnection(port: server.port, from: "127.0.1.\(address)")
            for _ in 0..<64 {
                let reply = try connection.request("POST", "/stream-tickets", headers: bearer(reader))
                if reply.status == 201 { issued += 1 } else { refusal = reply; break }
            }
        }
        XCTAssertEqual(issued, 2_500)
        // Refused with 503 and Retry-After, not grown.
        let full = try XCTUnwrap(refusal)
        XCTAssertEqual(full.status, 503)
        XCTAssertNotNil(full.header("Retry-After"))
        XCTAssertEqual(full.header("Content-Type"), "application/problem+json")
        XCTAssertTrue(full.text.contains("credential"), full.text)
        // Another credential still gets tickets.
        XCTAssertEqual(try HTTPConnection(port: server.port, from: "127.0.2.1").request("POST", "/stream-tickets", headers: bearer(api)).status, 201)
        // A ticket issued before the share filled still opens a stream, and that frees its place.
        XCTAssertEqual(try server.openEventStream("/things/events?ticket=\(first)").reply.status, 200)
        XCTAssertEqual(try HTTPConnection(port: server.port, from: "127.0.2.2").request("POST", "/stream-tickets", headers: bearer(reader)).status, 201)
    }

    func testOpenServerIssuesTicketsAndIgnoresThem() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let reply = try server.request("POST", "/stream-tickets")
        XCTAssertEqual(reply.status, 201)
        XCTAssertNotNil((reply.json?["ticket"] as? String)?.range(of: "^[A-Za-z0-9_-]{43}$", options: .regularExpression))
        XCTAssertEqual(reply.json?["expiresIn"] as? Int, 60)
        // Streams need no credential here, so any ticket (or a reused one) is ignored.
        XCTAssertEqual(try server.openEventStream("/events?ticket=whatever").reply.status, 200)
        XCTAssertEqual(try server.openEventStream("/events?ticket=whatever").reply.status, 200)
    }

    func testApiTokenOnlyLeavesTicketsAndStreamsOpen() throws {
        let server = try TidingsProcess(arguments: ["--api-token", api])
        defer { server.stop() }
        // Without --read-token a ticket grants nothing that is not already open.
        XCTAssertEqual(try server.request("POST", "/stream-tickets").status, 201)
        XCTAssertEqual(try server.openEventStream("/things/events").reply.status, 200)
    }

    /// One reader could take all 10,000 tickets, and everyone else got 503 for a minute.
    func test_one_client_address_holds_at_most_64_tickets_and_others_still_get_theirs() throws {
        let server = try TidingsProcess(environment: ["TIDINGS_READ_TOKEN": "reader"])
        defer { server.stop() }
        let greedy = try HTTPConnection(port: server.port)
        var statuses: [Int: Int] = [:]
        var tickets: [String] = []
        for _ in 0..<100 {
            let reply = try greedy.request("POST", "/stream-tickets", headers: ["Authorization": "Bearer reader"])
            statuses[reply.status, default: 0] += 1
            if reply.status == 503 { XCTAssertEqual(reply.header("Retry-After"), "5") }
            if let ticket = reply.json?["ticket"] as? String { tickets.append(ticket) }
        }
        XCTAssertEqual(statuses, [201: 64, 503: 36])
        let other = try HTTPConnection(port: server.port, from: "127.0.0.2")   // another client address
        let others = try other.request("POST", "/stream-tickets", headers: ["Authorization": "Bearer reader"])
        XCTAssertEqual(others.status, 201, others.text)
        // Using one gives the greedy client one more.
        let stream = try server.openEventStream("/events?topics=preferences&keys=age&ticket=\(tickets[0])")
        XCTAssertEqual(try stream.nextEvent().name, "preference")
        let more = try greedy.request("POST", "/stream-tickets", headers: ["Authorization": "Bearer reader"])
        XCTAssertEqual(more.status, 201, more.text)
    }
}
