import Foundation
import XCTest
import TestFixtures
import TidingsAPI
import TidingsTesting

/// API.md "Caching and compression", the middleware's rules in-process (see `InProcessTidings`):
/// `If-Match` and `If-Modified-Since` on reads, `Cache-Control`, small answers left alone,
/// `Accept-Encoding` q-values honoured (gzip and br decode to the identity body), a write's
/// `If-Match` with a compressed representation's tag, OFREP's bulk revalidation and
/// `flagConfigLastModified`. Every route's validators and the round trips over loaded posts and
/// streams are `EndToEndTests.CachingTests`.
final class CachingRoutesTests: XCTestCase {
    private var server: InProcessTidings!

    override func setUpWithError() throws { server = try InProcessTidings() }
    override func tearDown() { server?.stop(); server = nil }

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
            XCTAssertEqual(reply.entityTag()?.weak, false, route)
        }
    }

    func test_a_representation_is_compressed_once_whatever_query_parameters_a_client_adds() throws {
        XCTAssertEqual(try server.request("PUT", "/preferences/name", json: ["value": String(repeating: "tidings ", count: 400)]).status, 200)
        func compressions() throws -> Double {
            try XCTUnwrap(MetricSamples.parse(server.get("/metrics").text)["tidings_http_compressions_total"])
        }
        let before = try compressions()
        var bodies: Set<[UInt8]> = []
        for n in 1...6 {
            for coding in ["gzip", "br"] {
                let reply = try server.get("/preferences?ignored=\(n)&cachebuster=\(n * 7)", headers: ["Accept-Encoding": coding])
                XCTAssertEqual(reply.header("Content-Encoding"), coding)
                bodies.insert(reply.body)
            }
        }
        XCTAssertEqual(try compressions() - before, 2, "one gzip and one br compression for the one representation")
        XCTAssertEqual(bodies.count, 2)
        // A new revision is a new representation.
        XCTAssertEqual(try server.request("PUT", "/preferences/age", json: ["value": 41]).status, 200)
        XCTAssertEqual(try server.get("/preferences?ignored=1", headers: ["Accept-Encoding": "gzip"]).header("Content-Encoding"), "gzip")
        XCTAssertEqual(try compressions() - before, 3)
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
        let identity = try XCTUnwrap(server.get("/preferences/name").entityTag())
        XCTAssertEqual(read.entityTag()?.opaque, identity.opaque + "-gzip", tag)
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
