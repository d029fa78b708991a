import EventHTTP
import Foundation
import HTTPTypes
import TestFixtures
import XCTest
@testable import TidingsAPI

/// The API's routes and access rules in-process: the real application and resources over a
/// SQLite store in a temporary directory, each request run through `Router.respond(to:)` — no
/// binary, no port, no socket.
@MainActor
final class RoutesInProcessTests: XCTestCase {
    private var directory: URL!
    private var app: TidingsApplication!

    override func setUp() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("routes-\(UUID().uuidString)")
        var configuration = TidingsConfiguration()
        configuration.dataDir = directory.path
        configuration.apiTokens = ["write-secret"]
        configuration.readToken = "read-secret"
        configuration.corsOrigins = ["https://app.example"]
        configuration.feedRefresh = 0
        app = try TidingsApplication(configuration: configuration, loop: try EventLoop())
    }

    override func tearDown() async throws {
        app = nil
        try? FileManager.default.removeItem(at: directory)
    }

    private func send(_ method: HTTPRequest.Method, _ target: String, token: String? = nil,
                      headers: HTTPFields = [:], body: String? = nil) async -> InProcessAnswer {
        var headers = headers
        if let token { headers[.authorization] = "Bearer \(token)" }
        if body != nil { headers[.contentType] = "application/json" }
        return await app.router.respond(to: Request(method: method, target: target, headers: headers,
                                                    body: Array((body ?? "").utf8)))
    }

    /// The answer of a route that must answer with a response (not a stream).
    private func response(_ method: HTTPRequest.Method, _ target: String, token: String? = nil,
                          headers: HTTPFields = [:], body: String? = nil) async throws -> Response {
        let answer = await send(method, target, token: token, headers: headers, body: body)
        return try XCTUnwrap(answer.response)
    }

    private func problem(_ response: Response?) throws -> ProblemDetails {
        try JSONDecoder().decode(ProblemDetails.self, from: Data(try XCTUnwrap(response).body))
    }

    func testProbesAreOpenAndEveryAnswerCarriesTheRevision() async throws {
        let health = try await response(.get, "/healthz")
        XCTAssertEqual(health.status, .ok)
        XCTAssertEqual(health.headers[.tidingsRevision], "0")
        let missing = try await response(.get, "/no/such/thing")
        XCTAssertEqual(missing.status, .notFound, "an unknown path is 404 before any credential check")
        XCTAssertEqual(try problem(missing).title, "Not Found")
        XCTAssertEqual(missing.headers[.tidingsRevision], "0")
    }

    func testReadsNeedTheReadTokenAndWritesTheWriteToken() async throws {
        let anonymous = try await response(.get, "/preferences")
        XCTAssertEqual(anonymous.status, .unauthorized)
        XCTAssertEqual(anonymous.headers[.wwwAuthenticate], #"Bearer realm="tidings""#)
        XCTAssertEqual(try problem(anonymous).title, "Unauthorized")
        let asReader = try await response(.get, "/preferences", token: "read-secret").status
        XCTAssertEqual(asReader, .ok)
        let asWriter = try await response(.get, "/preferences", token: "write-secret").status
        XCTAssertEqual(asWriter, .ok)

        let readerWrites = try await response(.put, "/preferences/name", token: "read-secret", body: #"{"value":"Ann"}"#)
        XCTAssertEqual(readerWrites.status, .unauthorized)
        XCTAssertEqual(readerWrites.headers[.wwwAuthenticate], #"Bearer realm="tidings", error="invalid_token""#)

        let written = try await response(.put, "/preferences/name", token: "write-secret", body: #"{"value":"Ann"}"#)
        XCTAssertEqual(written.status, .ok)
        let read = try await response(.get, "/preferences/name", token: "read-secret")
        XCTAssertEqual(read.headers[.eTag], written.headers[.eTag])
        XCTAssertEqual(JSONValue.parse(read.body)?["value"], "Ann")
        XCTAssertEqual(read.headers[.tidingsRevision], "1")
    }

    /// Stream tickets: a POST that reads; a ticket opens one event stream once, and only there.
    func testTicketsOpenOneEventStreamOnce() async throws {
        let anonymousTicket = try await response(.post, "/stream-tickets").status
        XCTAssertEqual(anonymousTicket, .unauthorized)
        let issued = try await response(.post, "/stream-tickets", token: "read-secret")
        XCTAssertEqual(issued.status, .created)
        struct Ticket: Decodable { let ticket: String }
        let ticket = try JSONDecoder().decode(Ticket.self, from: Data(issued.body)).ticket

        let ticketOnAResource = try await response(.get, "/preferences?ticket=\(ticket)").status
        XCTAssertEqual(ticketOnAResource, .unauthorized,
                       "a ticket is taken on event streams only")
        let opened = await send(.get, "/preferences/events?ticket=\(ticket)")
        guard case .eventStream = opened else {
            return XCTFail("the ticket must open the stream")
        }
        let reused = try await response(.get, "/preferences/events?ticket=\(ticket)")
        XCTAssertEqual(reused.status, .unauthorized)
        XCTAssertEqual(try problem(reused).detail, "The stream ticket is unknown, already used or expired; get a new one with POST /stream-tickets.")
    }

    /// CORS is router-wide: a preflight needs no credential and lists the route's methods.
    func testPreflightIsAnsweredWithoutCredentials() async throws {
        let preflight = try await response(.options, "/preferences/name", headers: [
            .origin: "https://app.example", .accessControlRequestMethod: "PUT",
        ])
        XCTAssertEqual(preflight.status, .noContent)
        XCTAssertEqual(preflight.headers[.accessControlAllowOrigin], "https://app.example")
        XCTAssertEqual(preflight.headers[.accessControlAllowMethods], "GET, HEAD, PUT, DELETE, OPTIONS")
        let plainOptions = try await response(.options, "/preferences/name").status
        XCTAssertEqual(plainOptions, .unauthorized,
                       "an OPTIONS that is not a preflight is a read")
    }
}
