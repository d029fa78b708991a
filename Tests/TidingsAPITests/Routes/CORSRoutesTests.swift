import Foundation
import TestFixtures
import TidingsAPI
import TidingsTesting
import XCTest

/// `--cors-origin`: headers for allowed origins only, preflight, event-stream heads, and
/// nothing at all without the flag — the router's middleware, in-process (see `InProcessTidings`).
final class CORSRoutesTests: XCTestCase {
    private let allowed = "https://app.example"
    private let corsHeaders = ["Access-Control-Allow-Origin", "Access-Control-Expose-Headers",
                               "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age"]

    func testAllowedOriginGetsHeadersOthersDoNot() throws {
        let server = try InProcessTidings { $0.corsOrigins.append(allowed); $0.corsOrigins.append("http://localhost:3000") }
        defer { server.stop() }

        let reply = try server.get("/preferences", headers: ["Origin": allowed])
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.header("Access-Control-Allow-Origin"), allowed)
        XCTAssertEqual(reply.header("Access-Control-Expose-Headers"), "ETag, Location, Tidings-Revision")
        XCTAssertTrue(reply.headerList("Vary").contains("Origin"), "\(reply.headerList("Vary"))")
        XCTAssertNil(reply.header("Access-Control-Allow-Credentials"))
        XCTAssertEqual(try server.get("/things", headers: ["Origin": "http://localhost:3000"]).header("Access-Control-Allow-Origin"),
                       "http://localhost:3000")

        let other = try server.get("/preferences", headers: ["Origin": "https://evil.example"])
        XCTAssertEqual(other.status, 200)
        for name in corsHeaders { XCTAssertNil(other.header(name), name) }
        // Still marked as varying by Origin, so a cache never hands it to an allowed page.
        XCTAssertTrue(other.headerList("Vary").contains("Origin"), "\(other.headerList("Vary"))")

        // Errors carry the headers too, so a page can read them.
        let missing = try server.get("/preferences/nope", headers: ["Origin": allowed])
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.header("Access-Control-Allow-Origin"), allowed)
    }

    func testPreflightIsAnswered() throws {
        let server = try InProcessTidings { $0.corsOrigins.append(allowed); $0.apiTokens.append("t0ken") }
        defer { server.stop() }
        let preflight = try server.request("OPTIONS", "/preferences/age", headers: [
            "Origin": allowed, "Access-Control-Request-Method": "PUT",
            "Access-Control-Request-Headers": "authorization, content-type, if-match",
        ])
        XCTAssertEqual(preflight.status, 204)
        XCTAssertEqual(preflight.header("Access-Control-Allow-Origin"), allowed)
        XCTAssertEqual(Set(preflight.headerList("Access-Control-Allow-Methods")), ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"],
                       "the route's methods, no POST")
        XCTAssertTrue(Set(preflight.headerList("Access-Control-Allow-Headers"))
            .isSuperset(of: ["Authorization", "Content-Type", "If-Match", "If-None-Match", "Last-Event-ID"]),
            "\(preflight.headerList("Access-Control-Allow-Headers"))")
        XCTAssertNotNil(preflight.header("Access-Control-Max-Age").flatMap(Int.init))

        // The route's own methods: /things has POST.
        let things = try server.request("OPTIONS", "/things", headers: ["Origin": allowed, "Access-Control-Request-Method": "POST"])
        XCTAssertTrue(things.headerList("Access-Control-Allow-Methods").contains("POST"), "\(things.headerList("Access-Control-Allow-Methods"))")

        // A preflight from another origin gets no permission.
        let foreign = try server.request("OPTIONS", "/preferences/age",
                                         headers: ["Origin": "https://evil.example", "Access-Control-Request-Method": "PUT"])
        XCTAssertNil(foreign.header("Access-Control-Allow-Origin"))
        XCTAssertNil(foreign.header("Access-Control-Allow-Methods"))

        // The 401 of the real request is readable by the page.
        let refused = try server.request("PUT", "/preferences/age", headers: ["Origin": allowed], json: ["value": 1])
        XCTAssertEqual(refused.status, 401)
        XCTAssertEqual(refused.header("Access-Control-Allow-Origin"), allowed)
    }

    func testEventStreamHeadCarriesCorsHeaders() throws {
        let server = try InProcessTidings { $0.corsOrigins.append(allowed) }
        defer { server.stop() }
        let stream = try server.openEventStream("/events", headers: ["Origin": allowed])
        XCTAssertEqual(stream.reply.status, 200)
        XCTAssertEqual(stream.reply.header("Access-Control-Allow-Origin"), allowed)
        XCTAssertEqual(stream.reply.header("Content-Type"), "text/event-stream")
        XCTAssertNoThrow(try stream.nextEvent())
    }

    func testWildcardAnswersStar() throws {
        let server = try InProcessTidings { $0.corsOrigins.append("*") }
        defer { server.stop() }
        let reply = try server.get("/preferences", headers: ["Origin": "https://anywhere.example"])
        XCTAssertEqual(reply.header("Access-Control-Allow-Origin"), "*")
        XCTAssertNil(reply.header("Access-Control-Allow-Credentials"))
        let preflight = try server.request("OPTIONS", "/things",
                                           headers: ["Origin": "https://x.example", "Access-Control-Request-Method": "POST"])
        XCTAssertEqual(preflight.status, 204)
        XCTAssertEqual(preflight.header("Access-Control-Allow-Origin"), "*")
        XCTAssertNotNil(preflight.header("Access-Control-Allow-Methods"))
    }

    func testNoCorsHeadersWithoutTheFlag() throws {
        let server = try InProcessTidings()
        defer { server.stop() }
        let reply = try server.get("/preferences", headers: ["Origin": allowed])
        XCTAssertEqual(reply.status, 200)
        for name in corsHeaders { XCTAssertNil(reply.header(name), name) }
        let preflight = try server.request("OPTIONS", "/preferences/age",
                                           headers: ["Origin": allowed, "Access-Control-Request-Method": "PUT"])
        XCTAssertEqual(preflight.status, 204)
        XCTAssertNotNil(preflight.header("Allow"))
        for name in corsHeaders { XCTAssertNil(preflight.header(name), name) }
        let stream = try server.openEventStream("/events", headers: ["Origin": allowed])
        XCTAssertNil(stream.reply.header("Access-Control-Allow-Origin"))
    }
}
