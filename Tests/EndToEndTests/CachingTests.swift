import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// API.md "Caching and compression" on the real binary over real sockets: a validator on every
/// `GET` and `304` for it (weak comparison, lists, `*`), `If-Match` and `If-Modified-Since` on
/// reads, `Cache-Control`, `Vary`, gzip that decodes to the identity body, small answers left
/// alone, `Accept-Encoding` q-values honoured, `HEAD` with `GET`'s fields, OFREP's
/// `flagConfigLastModified`.
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
                XCTAssertTrue(etag.hasPrefix("\"") && etag.hasSuffix("\""), "\(route): not a strong tag: \(etag)")
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

    func test_If_Match_and_If_Modified_Since_on_reads() throws {
        let etag = try XCTUnwrap(try server.get("/preferences/schema").header("ETag"))
        XCTAssertEqual(try server.get("/preferences/schema", headers: ["If-Match": etag]).status, 200)
        let failed = try server.get("/preferences/schema", headers: ["If-Match": "\"other\""])
        XCTAssertEqual(failed.status, 412)
        XCTAssertEqual(failed.header("Content-Type"), "application/problem+json")
        XCTAssertEqual(try server.get("/preferences/schema", headers: ["If-Match": "W/" + etag]).status, 412,
                       "If-Match compares strongly")

        let sample = try server.get("/sample/posts")
        let lastModified = try XCTUnwrap(sample.header("Last-Modified"))
        XCTAssertEqual(try server.get("/sample/posts", headers: ["If-Modified-Since": lastModified]).status, 304)
        XCTAssertEqual(try server.get("/sample/posts", headers: ["If-Modified-Since": "Sun, 06 Nov 1994 08:49:37 GMT"]).status, 200)
        // If-None-Match decides when both are present.
        XCTAssertEqual(try server.get("/sample/posts", headers: ["If-Modified-Since": lastModified,
                                                                 "If-None-Match": "\"other\""]).status, 200)
    }

    func test_cache_control_on_json_resources_and_fixed_answers() throws {
        for route in ["/preferences", "/preferences/age", "/things", "/posts", "/healthz", "/no/such/route"] {
            XCTAssertEqual(try server.get(route).header("Cache-Control"), "no-cache", route)
        }
        for route in ["/", "/openapi.yaml", "/preferences/schema", "/sample/posts"] {
            let reply = try server.get(route)
            XCTAssertEqual(reply.header("Cache-Control"), "no-cache", route)
            XCTAssertFalse(reply.header("ETag")?.hasPrefix("W/") ?? true, route)
        }
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

    func test_small_answers_are_not_compressed_and_q_values_are_honoured() throws {
        for route in ["/healthz", "/preferences/age", "/things"] {
            let reply = try server.get(route, headers: ["Accept-Encoding": "gzip"])
            XCTAssertLessThanOrEqual(reply.body.count, 1_024, route)
            XCTAssertNil(reply.header("Content-Encoding"), route)
            XCTAssertEqual(reply.header("Vary"), "Accept-Encoding", route)
        }
        let route = "/openapi.yaml"
        let identity = try server.get(route).body
        func coding(_ acceptEncoding: String) throws -> String? {
            let reply = try server.get(route, headers: ["Accept-Encoding": acceptEncoding])
            XCTAssertEqual(reply.status, 200)
            switch reply.header("Content-Encoding") {
            case "gzip": XCTAssertEqual(try GzipDecoder.decode(reply.body), identity)
            case "br": XCTAssertEqual(try BrotliDecoder.decode(reply.body), identity)
            default: XCTAssertEqual(reply.body, identity)
            }
            return reply.header("Content-Encoding")
        }
        XCTAssertEqual(try coding("gzip"), "gzip")
        XCTAssertEqual(try coding("GZIP;q=0.5"), "gzip")
        XCTAssertEqual(try coding("x-gzip"), "gzip")
        XCTAssertEqual(try coding("*"), "br", "br wins a tie: it is smaller")
        XCTAssertEqual(try coding("gzip, br;q=0.5"), "gzip")
        XCTAssertEqual(try coding("*, br;q=0"), "gzip")
        XCTAssertNil(try coding("gzip;q=0"))
        XCTAssertNil(try coding("gzip;q=0.000, deflate"))
        XCTAssertEqual(try coding("br, deflate"), "br")
        XCTAssertNil(try coding("deflate, zstd"))
        XCTAssertNil(try coding("identity"))
        XCTAssertEqual(try coding("*, gzip;q=0"), "br")
        XCTAssertNil(try coding("*, gzip;q=0, br;q=0"))
        XCTAssertNil(try coding("gzip;q=0.5, identity;q=1"))
        // Identity refused: even a small answer is compressed when gzip is acceptable.
        let small = try server.get("/healthz", headers: ["Accept-Encoding": "gzip, identity;q=0"])
        XCTAssertEqual(small.header("Content-Encoding"), "gzip")
        XCTAssertEqual(String(decoding: try GzipDecoder.decode(small.body), as: UTF8.self), #"{"status":"ok"}"#)
    }

    func test_writes_accept_the_gzip_representations_tag_in_If_Match() throws {
        // A long string makes the record worth compressing.
        let long = String(repeating: "tidings ", count: 300)
        XCTAssertEqual(try server.request("PUT", "/preferences/name", json: ["value": long]).status, 200)
        let read = try server.get("/preferences/name", headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(read.header("Content-Encoding"), "gzip")
        let tag = try XCTUnwrap(read.header("ETag"))
        XCTAssertTrue(tag.hasSuffix("-gzip\""), tag)
        XCTAssertEqual(try server.request("PUT", "/preferences/name", headers: ["If-Match": tag], json: ["value": "short"]).status, 200)
        XCTAssertEqual(try server.request("PUT", "/preferences/name", headers: ["If-Match": tag], json: ["value": "again"]).status, 412)
    }

    func test_OFREP_bulk_revalidates_its_gzip_representation_and_refuses_a_malformed_flagConfigLastModified() throws {
        func bulk(_ query: String = "", headers: [String: String] = [:]) throws -> HTTPReply {
            var headers = headers
            headers["Content-Type"] = "application/json"
            return try server.request("POST", "/ofrep/v1/evaluate/flags" + query, headers: headers, body: Array("{}".utf8))
        }
        for bad in ["-1", "abc", "1.5", "", "2026-02-30T00:00:00Z", "2026-02-20%2021:28:18", "2026-02-20T21:28:18", "%20"] {
            let reply = try bulk("?flagConfigLastModified=" + bad)
            XCTAssertEqual(reply.status, 400, bad)
            XCTAssertEqual(reply.json?["errorCode"] as? String, "PARSE_ERROR", bad)
        }
        for good in ["0", "1771622898", "2026-02-20T21:28:18Z", "2026-02-20T21:28:18.5%2B01:00", "2026-02-20t21:28:18z"] {
            XCTAssertEqual(try bulk("?flagConfigLastModified=" + good + "&flagConfigEtag=anything").status, 200, good)
        }
        let compressed = try bulk(headers: ["Accept-Encoding": "gzip"])
        XCTAssertEqual(compressed.status, 200)
        if compressed.header("Content-Encoding") == "gzip" {
            XCTAssertEqual(try GzipDecoder.decode(compressed.body), try bulk().body)
        }
        let tag = try XCTUnwrap(compressed.header("ETag"))
        XCTAssertEqual(try bulk(headers: ["Accept-Encoding": "gzip", "If-None-Match": tag]).status, 304)
    }
}
