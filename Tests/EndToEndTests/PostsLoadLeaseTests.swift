import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// The cluster's posts-load lease, with real processes on one SQLite data directory: a holder
/// killed mid-fetch does not make the load that joined it fail, nor end with the posts stored
/// before (they are not the dead holder's outcome): once the lease has expired, it is taken
/// over and the load fetches itself with its whole `--feed-timeout`. Instances of different
/// `--feed-url`s never wait on each other's fetch.
///
/// Before: the joined instance waited on the dead holder's lease and failed with "did not
/// answer within 2 s" without sending a request; then, once that was fixed, it took the expired
/// lease as one given back and was answered with the older stored posts (`loaded`, no request).
/// An instance of another URL waited on the first one's fetch and failed the same way.
final class PostsLoadLeaseTests: XCTestCase {
    func test_a_holder_killed_mid_fetch_is_taken_over_and_the_joined_instance_fetches_itself() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.otherFeed)
        let directory = try TemporaryDirectory()
        // A 2 s upstream timeout: the lease lives 2 + 5 s, which the joined instance waits out.
        let arguments = ["--feed-url", upstream.url, "--feed-timeout", "2", "--feed-refresh", "0"]
        let a = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { b.stop() }
        let failuresBefore = testRun?.totalFailureCount ?? 0
        defer {
            if (testRun?.totalFailureCount ?? 0) > failuresBefore { print("--- B:\n\(b.log)\n--- upstream: \(upstream.requestCount) requests") }
        }
        // The posts stored before: both instances serve them.
        XCTAssertEqual(try a.settledPosts("loaded").postTitles, ["Nine"])
        XCTAssertEqual(try b.settledPosts("loaded").postTitles, ["Nine"])
        let before = upstream.requestCount

        // A's refresh holds the lease with its request out; B's refresh joins it.
        upstream.behaviour = .hang
        XCTAssertEqual(try a.request("POST", "/posts/refresh").status, 202)
        XCTAssertTrue(eventually(within: 10) { upstream.requestCount == before + 1 }, "A's fetch never left:\n\(a.log)")
        XCTAssertEqual(try b.request("POST", "/posts/refresh").status, 202)
        // Killed, A cannot give the lease back, nor store an outcome.
        a.stop(signal: SIGKILL)
        upstream.behaviour = .posts(PostsFixture.feed)

        // B's load ends loaded with what the upstream serves now: it waited out A's lease, took
        // it over and fetched itself.
        let state = try b.settledPosts("loaded")
        XCTAssertEqual(state.postTitles, ["One", "Two", "Spaced"], "answered with the posts stored before A's load")
        XCTAssertNil(state.error)
        XCTAssertEqual(upstream.requestCount, before + 2, "A's request and B's own")
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
