import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Single-use stream tickets (`POST /stream-tickets`, `?ticket=`) against the real server, where
/// it takes several client addresses: the bounds per address and per credential. The tickets'
/// rules run in-process (`TidingsAPITests.AccessTicketRoutesTests`).
final class AccessTicketTests: XCTestCase {
    private let api = "api-secret-0123456789"
    private let reader = "read-secret-9876543210"

    private func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

    private func ticket(_ server: TidingsProcess, token: String) throws -> (ticket: String, reply: HTTPReply) {
        let reply = try server.request("POST", "/stream-tickets", headers: bearer(token))
        XCTAssertEqual(reply.status, 201, reply.text)
        return (try XCTUnwrap(reply.json?["ticket"] as? String), reply)
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
        XCTAssertEqual(full.value?["detail"], "Too many stream tickets are outstanding for your credential (at most 2500); retry shortly.", full.text)
        // Another credential still gets tickets.
        XCTAssertEqual(try HTTPConnection(port: server.port, from: "127.0.2.1").request("POST", "/stream-tickets", headers: bearer(api)).status, 201)
        // A ticket issued before the share filled still opens a stream, and that frees its place.
        XCTAssertEqual(try server.openEventStream("/things/events?ticket=\(first)").reply.status, 200)
        XCTAssertEqual(try HTTPConnection(port: server.port, from: "127.0.2.2").request("POST", "/stream-tickets", headers: bearer(reader)).status, 201)
    }

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
