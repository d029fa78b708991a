import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// `GET /metrics`: Prometheus text whose counters, histograms and gauges move with traffic.
final class MetricsTests: XCTestCase {
    /// The samples of a Prometheus text exposition: `name{labels}` exactly as printed → value.
    private func scrape(_ server: TidingsProcess, headers: [String: String] = [:]) throws -> [String: Double] {
        let reply = try server.get("/metrics", headers: headers)
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.mediaType()?.type, "text/plain")
        XCTAssertEqual(reply.mediaType()?.parameters["version"], "0.0.4")
        var samples: [String: Double] = [:]
        for line in reply.text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                XCTFail("unparseable sample line: \(line)")
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    private func requests(_ route: String, _ method: String, _ status: Int) -> String {
        #"tidings_http_requests_total{route="\#(route)",method="\#(method)",status="\#(status)"}"#
    }

    func testCountersMoveWithRequests() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let before = try scrape(server)
        XCTAssertEqual(before["tidings_open_streams"], 0)
        XCTAssertEqual(before[#"tidings_events_published_total{topic="preferences"}"#], 0)
        XCTAssertEqual(before[#"tidings_upstream_fetches_total{outcome="success"}"#], 0)

        XCTAssertEqual(try server.request("PUT", "/preferences/age", json: ["value": 6]).status, 200)
        XCTAssertEqual(try server.request("PUT", "/preferences/speed", json: ["value": 1.5]).status, 200)
        XCTAssertEqual(try server.request("PUT", "/preferences/age", json: ["value": "x"]).status, 422)
        XCTAssertEqual(try server.request("POST", "/things", json: ["thing": "btw"]).status, 201)
        XCTAssertEqual(try server.get("/preferences/name").status, 200)
        XCTAssertEqual(try server.get("/some/raw/path-12345").status, 404)

        let after = try scrape(server)
        XCTAssertEqual(after[requests("/preferences/{key}", "PUT", 200)], 2)
        XCTAssertEqual(after[requests("/preferences/{key}", "PUT", 422)], 1)
        XCTAssertEqual(after[requests("/preferences/{key}", "GET", 200)], 1)
        XCTAssertEqual(after[requests("/things", "POST", 201)], 1)
        XCTAssertEqual(after[requests("unmatched", "GET", 404)], 1)
        XCTAssertEqual(after[requests("/metrics", "GET", 200)], 1, "the first scrape counts once answered")
        // Never the raw path as a label.
        XCTAssertFalse(after.keys.contains { $0.contains("path-12345") || $0.contains("/preferences/age") })

        // Latency histogram by route: 4 answers on /preferences/{key}, buckets cumulative.
        XCTAssertEqual(after[#"tidings_http_request_duration_seconds_count{route="/preferences/{key}"}"#], 4)
        XCTAssertEqual(after[#"tidings_http_request_duration_seconds_bucket{route="/preferences/{key}",le="+Inf"}"#], 4)
        let sum = try XCTUnwrap(after[#"tidings_http_request_duration_seconds_sum{route="/preferences/{key}"}"#])
        XCTAssertGreaterThan(sum, 0)
        XCTAssertLessThan(sum, 10)

        // Events published (two preference changes, one thing) and store writes (three commits).
        XCTAssertEqual(after[#"tidings_events_published_total{topic="preferences"}"#], 2)
        XCTAssertEqual(after[#"tidings_events_published_total{topic="things"}"#], 1)
        let commits = try XCTUnwrap(after["tidings_store_write_duration_seconds_count"])
        XCTAssertGreaterThanOrEqual(commits, 1)
        XCTAssertLessThanOrEqual(commits, 3)
        XCTAssertGreaterThan(after["tidings_store_write_duration_seconds_sum"] ?? 0, 0)

        // A write that changes nothing publishes nothing.
        XCTAssertEqual(try server.request("PUT", "/preferences/age", json: ["value": 6]).status, 200)
        let unchanged = try scrape(server)
        XCTAssertEqual(unchanged[#"tidings_events_published_total{topic="preferences"}"#], 2)
        XCTAssertEqual(unchanged[requests("/preferences/{key}", "PUT", 200)], 3)
    }

    func testUpstreamFetchesAndPostsEventsAreCounted() throws {
        // The default feed is the server's own /sample/posts, fetched over HTTP.
        let server = try TidingsProcess()
        defer { server.stop() }
        let posts = try server.get("/posts?wait=10")
        XCTAssertEqual(posts.status, 200)
        XCTAssertEqual(posts.json?["state"] as? String, "loaded", posts.text)
        XCTAssertTrue(try eventually { try scrape(server)[#"tidings_upstream_fetches_total{outcome="success"}"#] == 1 })
        let samples = try scrape(server)
        XCTAssertEqual(samples[#"tidings_upstream_fetches_total{outcome="timeout"}"#], 0)
        XCTAssertGreaterThanOrEqual(samples[#"tidings_events_published_total{topic="posts"}"#] ?? 0, 1)
        XCTAssertEqual(samples[requests("/sample/posts", "GET", 200)], 1)
        XCTAssertEqual(samples[requests("/posts", "GET", 200)], 1)

        // A failing upstream is counted by its outcome.
        let failing = try TidingsProcess(arguments: ["--feed-url", "http://127.0.0.1:\(server.port)/no/such/feed"])
        defer { failing.stop() }
        XCTAssertEqual(try failing.get("/posts?wait=10").json?["state"] as? String, "failed")
        XCTAssertTrue(try eventually { try scrape(failing)[#"tidings_upstream_fetches_total{outcome="http_error"}"#] ?? 0 >= 1 })
    }

    func testOpenStreamsGaugeGoesUpAndDown() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let first = try server.openEventStream("/events")
        let second = try server.openEventStream("/preferences/age/events")
        XCTAssertEqual(first.reply.status, 200)
        XCTAssertEqual(second.reply.status, 200)
        XCTAssertTrue(try eventually { try scrape(server)["tidings_open_streams"] == 2 })
        let samples = try scrape(server)
        XCTAssertEqual(samples[requests("/events", "GET", 200)], 1)
        XCTAssertEqual(samples[requests("/preferences/{key}/events", "GET", 200)], 1)
        // Live events reach the counter while streams are open.
        XCTAssertEqual(try server.request("PUT", "/preferences/age", json: ["value": 11]).status, 200)
        XCTAssertEqual(try second.nextEvent().name, "preference")   // snapshot
        XCTAssertEqual(try second.nextEvent().json?["value"] as? Int, 11)

        shutdown(first.connection.fd, Int32(SHUT_RDWR))
        XCTAssertTrue(try eventually { try scrape(server)["tidings_open_streams"] == 1 })
        shutdown(second.connection.fd, Int32(SHUT_RDWR))
        XCTAssertTrue(try eventually { try scrape(server)["tidings_open_streams"] == 0 })
    }

    func testMetricsNeedTheReadTokenWhenSet() throws {
        let server = try TidingsProcess(arguments: ["--read-token", "r3ad"])
        defer { server.stop() }
        XCTAssertEqual(try server.get("/metrics").status, 401)
        let samples = try scrape(server, headers: ["Authorization": "Bearer r3ad"])
        XCTAssertEqual(samples[requests("/metrics", "GET", 401)], 1)
    }
}
