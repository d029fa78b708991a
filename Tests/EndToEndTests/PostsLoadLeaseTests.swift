import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// The cluster's posts-load lease, with real processes on one SQLite data directory: a holder
/// killed mid-fetch does not make the next instance's load fail (it takes the lease over once
/// it has expired and fetches with its whole `--feed-timeout`), and instances of different
/// `--feed-url`s never wait on each other's fetch. Before: the surviving instance waited on the
/// dead holder's lease and failed with "did not answer within 2 s" without sending a request;
/// an instance of another URL waited on the first one's fetch and failed the same way.
final class PostsLoadLeaseTests: XCTestCase {
    func test_a_holder_killed_mid_fetch_is_taken_over_and_the_next_instance_loads() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .hang
        let directory = try TemporaryDirectory()
        // A 2 s upstream timeout: the lease lives 2 + 5 s, which the next instance waits out.
        let arguments = ["--feed-url", upstream.url, "--feed-timeout", "2", "--feed-refresh", "0"]
        let a = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { a.stop() }
        XCTAssertEqual(try a.request("GET", "/posts").status, 200)
        XCTAssertTrue(eventually(within: 10) { upstream.requestCount == 1 }, "A's fetch never left:\n\(a.log)")
        // A holds the lease with its request out: killed, it cannot give it back.
        a.stop(signal: SIGKILL)
        upstream.behaviour = .posts(PostsFixture.feed)

        let b = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { b.stop() }
        let failuresBefore = testRun?.totalFailureCount ?? 0
        defer {
            if (testRun?.totalFailureCount ?? 0) > failuresBefore { print("--- B:\n\(b.log)\n--- upstream: \(upstream.requestCount) requests") }
        }
        // B's first load ends loaded: it waited out A's lease, then fetched itself.
        let state = try b.settledPosts("loaded")
        XCTAssertEqual(state.postTitles, ["One", "Two", "Spaced"])
        XCTAssertNil(state.error)
        XCTAssertEqual(upstream.requestCount, 2, "A's request and B's own")
    }

    func test_instances_of_different_feed_urls_fetch_at_once() throws {
        let first = try UpstreamServer()
        defer { first.stop() }
        first.behaviour = .hang
        let second = try UpstreamServer()
        defer { second.stop() }
        second.behaviour = .posts(PostsFixture.otherFeed)
        let directory = try TemporaryDirectory()
        func arguments(_ upstream: UpstreamServer) -> [String] {
            ["--feed-url", upstream.url, "--feed-timeout", "10", "--feed-refresh", "0"]
        }
        let a = try TidingsProcess(arguments: arguments(first), dataDirectory: directory.url)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments(second), dataDirectory: directory.url)
        defer { b.stop() }
        // A's fetch holds its feed's lease (its upstream never answers).
        XCTAssertEqual(try a.request("GET", "/posts").status, 200)
        XCTAssertTrue(eventually(within: 10) { first.requestCount == 1 }, "A's fetch never left:\n\(a.log)")
        // B, of another feed, does not wait for it: it fetches its own at once.
        let state = try b.posts(wait: 8)
        XCTAssertEqual(state.state, "loaded", "\(state.json)\n--- B:\n\(b.log)")
        XCTAssertEqual(state.postTitles, ["Nine"])
        XCTAssertEqual(state.source, second.url)
        XCTAssertEqual(second.requestCount, 1)
        XCTAssertEqual(first.requestCount, 1)
    }
}
