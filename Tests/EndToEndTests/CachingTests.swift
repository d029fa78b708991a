import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// API.md "Caching and compression" on the real binary over real sockets, over every route with
/// loaded posts: a validator on every `GET` and `304` for it (weak comparison, lists, `*`),
/// validators that follow changes, gzip and br that decode to the identity body with their own
/// tags, `HEAD` with `GET`'s fields, event streams that stay gzip. The middleware's other rules
/// run in-process (`TidingsAPITests.CachingRoutesTests`).
final class CachingTests: XCTestCase {
    private var server: TidingsProcess!

    override func setUpWithError() throws { server = try TidingsProcess() }
    override func tearDown() { server?.stop(); server = nil }

    /// Every GET route with a stable answer (`/metrics` changes with each request it counts).
    private func readRoutes() throws -> [String] {
        XCTAssertEqual(try server.request("POST", "/things", json: ["thing": "yolo"]).status, 201)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", json: ["value": 6]).status, 200)
        // Loaded posts, so /posts/1 exists and /posts is past its first state.
        XCTAssertEqual(try server.get("/posts?wait=10").json?["state"] as? String, "loaded")
        return ["/", "/openapi.yaml", "/preferences", "/preferences/schema", "/preferences/age", "/things",
                "/things/YOLO", "/posts", "/posts/1", "/sample/posts", "/healthz", "/readyz"]
    }

    func test_every_GET_has_a_validator_and_answers_If_None_Match_with_304() throws {
        for route in try readRoutes() {
            for encoding in [nil, "gzip"] {
                let headers = encoding.map { ["Accept-Encoding": $0] } ?? [:]
                let full = try server.get(route, headers: headers)
                XCTAssertEqual(full.status, 200, route)
                guard let etag = full.header("ETag") else { XCTFail("\(route): no ETag"); continue }
                XCTAssertEqual(full.entityTag()?.weak, false, "\(route): not a strong tag: \(etag)")
                XCTAssertNotNil(full.header("Cache-Control"), route)
                for condition in [etag, "W/" + etag, "\"nope\", " + etag, "*"] {
                    var conditional = headers
                    conditional["If-None-Match"] = condition
                    let reply = try server.get(route, headers: conditional)
                    XCTAssertEqual(reply.status, 304, "\(route) If-None-Match: \(condition)")
                    XCTAssertEqual(reply.header("ETag"), etag, route)
                    XCTAssertEqual(reply.header("Cache-Control"), full.header("Cache-Control"), route)
                    XCTAssertEqual(reply.header("Vary"), full.header("Vary"), route)
                    XCTAssertNil(reply.header("Content-Encoding"), route)
                    XCTAssertEqual(reply.body, [], route)
                }
                var other = headers
                other["If-None-Match"] = "\"nope\""
                XCTAssertEqual(try server.get(route, headers: other).status, 200, route)
                // HEAD: the same fields as GET, no body.
                let head = try server.request("HEAD", route, headers: headers)
                XCTAssertEqual(head.status, 200, route)
                for name in ["ETag", "Content-Length", "Content-Encoding", "Vary", "Cache-Control", "Content-Type"] {
                    XCTAssertEqual(head.header(name), full.header(name), "\(route) HEAD \(name)")
                }
                XCTAssertEqual(head.header("Content-Length"), String(full.body.count), route)
            }
        }
    }

    func test_revision_validators_follow_the_latest_change() throws {
        let before = try server.get("/preferences")
        XCTAssertEqual(before.header("ETag"), "\"0\"")
        XCTAssertEqual(try server.request("POST", "/things", json: ["thing": "btw"]).status, 201)   // revision 1
        XCTAssertEqual(try server.get("/preferences", headers: ["If-None-Match": "\"0\""]).status, 304,
                       "a change to the things is not a change of the preferences")
        XCTAssertEqual(try server.get("/things").header("ETag"), "\"1\"")
        XCTAssertEqual(try server.request("PUT", "/preferences/name", json: ["value": "x"]).status, 200)  // revision 2
        let after = try server.get("/preferences", headers: ["If-None-Match": "\"0\""])
        XCTAssertEqual(after.status, 200)
        XCTAssertEqual(after.header("ETag"), "\"2\"")
        // The posts document's revision, once stored.
        XCTAssertEqual(try server.get("/posts?wait=10").json?["state"] as? String, "loaded")
        XCTAssertTrue(try eventually { try server.get("/posts").header("ETag").map { Int($0.dropFirst().dropLast()) != nil } == true },
                      "GET /posts never carried its document's revision")
    }

    func test_gzip_round_trips_for_the_contract_the_page_and_posts() throws {
        XCTAssertEqual(try server.get("/posts?wait=10").json?["state"] as? String, "loaded")
        for route in ["/openapi.yaml", "/", "/posts", "/sample/posts"] {
            let identity = try server.get(route)
            XCTAssertNil(identity.header("Content-Encoding"), route)
            XCTAssertEqual(identity.header("Vary"), "Accept-Encoding", route)
            XCTAssertGreaterThan(identity.body.count, 1_024, route)
            let compressed = try server.get(route, headers: ["Accept-Encoding": "gzip, deflate"])
            XCTAssertEqual(compressed.header("Content-Encoding"), "gzip", route)
            XCTAssertEqual(compressed.header("Vary"), "Accept-Encoding", route)
            XCTAssertEqual(compressed.header("Content-Type"), identity.header("Content-Type"), route)
            XCTAssertLessThan(compressed.body.count, identity.body.count * 3 / 4, route)
            XCTAssertEqual(try GzipDecoder.decode(compressed.body), identity.body, route)
            // Two representations, two strong tags.
            let tag = try XCTUnwrap(identity.header("ETag"))
            XCTAssertEqual(compressed.header("ETag"), String(tag.dropLast()) + "-gzip\"", route)
            // The identity tag does not validate the gzip representation, and the other way round.
            XCTAssertEqual(try server.get(route, headers: ["Accept-Encoding": "gzip", "If-None-Match": tag]).status, 200)
            XCTAssertEqual(try server.get(route, headers: ["If-None-Match": compressed.header("ETag")!]).status, 200)
        }
    }

    func test_br_round_trips_with_its_own_tag() throws {
        XCTAssertEqual(try server.get("/posts?wait=10").json?["state"] as? String, "loaded")
        for route in ["/openapi.yaml", "/", "/posts", "/sample/posts"] {
            let identity = try server.get(route)
            let compressed = try server.get(route, headers: ["Accept-Encoding": "gzip, deflate, br, zstd"])
            XCTAssertEqual(compressed.header("Content-Encoding"), "br", route)
            XCTAssertEqual(compressed.header("Vary"), "Accept-Encoding", route)
            XCTAssertEqual(try BrotliDecoder.decode(compressed.body), identity.body, route)
            let gzip = try server.get(route, headers: ["Accept-Encoding": "gzip"])
            XCTAssertLessThan(compressed.body.count, gzip.body.count, route)
            let tag = try XCTUnwrap(identity.header("ETag"))
            let brTag = try XCTUnwrap(compressed.header("ETag"))
            XCTAssertEqual(brTag, String(tag.dropLast()) + "-br\"", route)
            XCTAssertEqual(try server.get(route, headers: ["Accept-Encoding": "br", "If-None-Match": brTag]).status, 304)
            XCTAssertEqual(try server.get(route, headers: ["Accept-Encoding": "br", "If-None-Match": gzip.header("ETag")!]).status, 200)
            let head = try server.request("HEAD", route, headers: ["Accept-Encoding": "br"])
            XCTAssertEqual(head.header("Content-Length"), String(compressed.body.count), route)
            XCTAssertEqual(head.header("Content-Encoding"), "br", route)
        }
        // Event streams stay gzip: a request that prefers br gets a gzip stream.
        let stream = try server.openEventStream("/preferences/age/events", headers: ["Accept-Encoding": "br, gzip"])
        XCTAssertEqual(stream.reply.header("Content-Encoding"), "gzip")
        XCTAssertEqual(try stream.nextEvent().json?["value"] as? Int, 5)
    }
}
