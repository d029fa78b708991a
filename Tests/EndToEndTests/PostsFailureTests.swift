import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// A bad upstream: each failure kind has its own message, the last good posts are kept and
/// served, and automatic retries back off exponentially.
final class PostsFailureTests: XCTestCase {
    func testEachFailureKindSaysWhichAndKeepsTheLastGoodPosts() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed)
        let server = try PostsFixture.server(upstream, timeout: 1, ["--log-level", "debug"])
        defer { server.stop() }
        let good = try server.settledPosts("loaded")

        let notPosts = "The upstream feed's answer is not a JSON array of posts:"
        let cases: [(UpstreamServer.Behaviour, String, Int?)] = [
            (.status(500), "The upstream feed answered with HTTP status 500, not 2xx.", 500),
            (.status(404), "The upstream feed answered with HTTP status 404, not 2xx.", 404),
            (.garbage, "The upstream feed's answer is not JSON.", nil),
            (.json(#"{"posts": []}"#), "\(notPosts) it is an object.", nil),
            (.json(#"[{"id": 1, "title": "t", "body": "b"}, {"id": 2, "title": "t"}]"#),
             #"\#(notPosts) element [1] has no "body"."#, nil),
            (.json(#"[{"id": true, "title": "t", "body": "b"}]"#),
             #"\#(notPosts) element [0] has "id" a boolean, not an integer or a string."#, nil),
            (.json(#"[{"id": 1, "title": 5, "body": "b"}]"#), #"\#(notPosts) element [0] has "title" an integer, not a string."#, nil),
            (.json(#"[{"id": 1, "title": "t", "body": "b", "userId": "x"}]"#),
             #"\#(notPosts) element [0] has "userId" a string, not an integer."#, nil),
            (.json(#"[{"id": "x", "title": "t", "body": "b", "userId": null}]"#),
             #"\#(notPosts) element [0] has "userId" null, not an integer."#, nil),
            (.json(#"[1]"#), "\(notPosts) element [0] is an integer, not an object.", nil),
            (.huge(bytes: 9 << 20, chunked: false), "The upstream feed's answer is larger than the 8 MiB limit.", nil),
            (.huge(bytes: 9 << 20, chunked: true), "The upstream feed's answer is larger than the 8 MiB limit.", nil),
            (.delayed(3, then: .posts(PostsFixture.otherFeed)), "The upstream feed did not answer within 1 s (--feed-timeout).", nil),
            (.trickle, "The upstream feed did not answer within 1 s (--feed-timeout).", nil),
        ]
        for (behaviour, expected, status) in cases {
            upstream.behaviour = behaviour
            let refresh = try server.request("POST", "/posts/refresh")
            XCTAssertEqual(refresh.status, 202)
            let failed = try server.settledPosts("failed")
            XCTAssertEqual(failed.message, expected, "\(behaviour)")
            XCTAssertEqual(failed.error?["upstreamStatus"] as? Int, status, "\(behaviour)")
            XCTAssertEqual(failed.postTitles, good.postTitles, "\(behaviour): last good posts not kept")
            XCTAssertEqual(failed.fetchedAt, good.fetchedAt, "\(behaviour)")
            XCTAssertEqual(try server.get("/posts/two-2").status, 200, "\(behaviour): single posts still served")
        }

        // Connection refused: the upstream is gone.
        upstream.stop()
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        let refused = try server.settledPosts("failed")
        XCTAssertEqual(refused.message, "Could not reach the upstream feed: connection refused by 127.0.0.1:\(upstream.port).")
        XCTAssertEqual(refused.postTitles, good.postTitles)
        XCTAssertNil(refused.error?["upstreamStatus"])

        // Each fetch's outcome was counted (the metrics hook also logs it at debug level).
        for outcome in ["success", "http_error", "invalid_body", "too_large", "timeout", "connection_error"] {
            // The server's stderr reaches the test through a pipe: wait for the line, do not race it.
            XCTAssertTrue(eventually { LogLine.parse(server.log).contains { $0.metadata["outcome"] == outcome } },
                          "no \(outcome) fetch logged:\n\(server.log)")
        }
    }

    func testColdFailureHasNoPostsAndNoFetchTime() throws {
        let upstream = try UpstreamServer()
        let deadURL = upstream.url, port = upstream.port
        upstream.stop()
        let server = try TidingsProcess(arguments: ["--feed-url", deadURL, "--feed-timeout", "1", "--feed-refresh", "0"])
        defer { server.stop() }
        let failed = try server.settledPosts("failed")
        XCTAssertEqual(failed.message, "Could not reach the upstream feed: connection refused by 127.0.0.1:\(port).")
        XCTAssertEqual(failed.posts.count, 0)
        XCTAssertTrue(failed.json["fetchedAt"] is NSNull)
        XCTAssertEqual(try server.get("/posts/1").status, 404)
    }

    func testRetriesBackOffExponentially() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .status(503)
        let server = try PostsFixture.server(upstream, timeout: 1)
        defer { server.stop() }
        let failed = try server.settledPosts("failed")
        XCTAssertEqual(failed.error?["upstreamStatus"] as? Int, 503)
        // Nobody asks again: the retries are the loader's own (after 1 s, 2 s, 4 s). The fourth
        // request succeeds, which ends the failure without anyone asking.
        XCTAssertTrue(eventually(within: 5) { upstream.requestCount >= 3 }, "only \(upstream.requestCount) requests")
        upstream.behaviour = .posts(PostsFixture.feed)
        XCTAssertTrue(try eventually(within: 6) { try server.posts().state == "loaded" })
        XCTAssertEqual(try server.posts().postTitles, ["One", "Two", "Spaced"])
        let times = upstream.requests.map(\.at)
        XCTAssertEqual(times.count, 4)
        let gaps = zip(times.dropFirst(), times).map { $0.timeIntervalSince($1) }
        guard gaps.count == 3 else { return XCTFail("gaps: \(gaps)") }
        XCTAssertEqual(gaps[0], 1, accuracy: 0.5, "\(gaps)")
        XCTAssertEqual(gaps[1], 2, accuracy: 0.5, "\(gaps)")
        XCTAssertEqual(gaps[2], 4, accuracy: 0.5, "\(gaps)")
        XCTAssertGreaterThan(gaps[1], gaps[0] * 1.5)
        XCTAssertGreaterThan(gaps[2], gaps[1] * 1.5)
    }
}
