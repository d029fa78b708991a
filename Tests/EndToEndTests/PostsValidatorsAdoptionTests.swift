import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Validators survive adoption (issue #34; openapi.yaml, Posts: "Upstream `ETag`/`Last-Modified`
/// are sent back as conditional headers"): an instance that takes another instance's stored
/// posts document asks the upstream conditionally on its next fetch, with the validators the
/// document's posts were fetched with — it does not fetch the whole feed again to learn them.
final class PostsValidatorsAdoptionTests: XCTestCase {
    func test_an_instance_that_took_another_instances_posts_fetches_next_with_their_validators() throws {
        let directory = try TemporaryDirectory()
        try checkValidatorsSurviveAdoption(store: [], dataDirectory: directory.url)
    }

    /// The same on PostgreSQL: the validators travel inside the stored document, in either store.
    func test_on_PostgreSQL_too() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        try checkValidatorsSurviveAdoption(store: ["--database-url", cluster.url], dataDirectory: nil)
    }

    private func checkValidatorsSurviveAdoption(store: [String], dataDirectory: URL?) throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed, etag: "v1")
        let arguments = store + ["--feed-url", upstream.url, "--feed-timeout", "2", "--feed-refresh", "0"]
        let a = try TidingsProcess(arguments: arguments, dataDirectory: dataDirectory)
        defer { a.stop() }
        XCTAssertEqual(try a.posts(wait: 10).state, "loaded")
        XCTAssertEqual(upstream.requestCount, 1)
        XCTAssertNil(upstream.requests[0].headers["if-none-match"], "A's first fetch has nothing to send back")
        let stored = try a.currentRevision()

        // B starts on the same store after A's fetch: its first read takes A's document.
        let b = try TidingsProcess(arguments: arguments, dataDirectory: dataDirectory)
        defer { b.stop() }
        let taken = try b.posts(wait: 10)
        XCTAssertEqual(taken.state, "loaded")
        XCTAssertEqual(taken.fetchedAt, try a.posts().fetchedAt, "B serves A's fetch")
        XCTAssertEqual(upstream.requestCount, 1, "B took the stored posts instead of fetching")

        // B's own refresh goes upstream once A's load lease is free (while it is held, a refresh
        // joins A's load and asks nobody: so ask again until B's request is out).
        XCTAssertTrue(try eventually(within: 10) {
            XCTAssertEqual(try b.request("POST", "/posts/refresh").status, 202)
            _ = try b.posts(wait: 5)
            return upstream.requestCount > 1
        }, "B never fetched")
        let conditional = upstream.requests[1]
        XCTAssertEqual(conditional.headers["if-none-match"], "\"v1\"",
                       "B's first fetch after taking A's document sends A's validators: \(conditional.headers)")
        // The 304 keeps the posts and stores nothing: the same document everywhere.
        XCTAssertEqual(try b.posts(wait: 5).state, "loaded")
        XCTAssertEqual(try b.currentRevision(), stored, "a 304 took no revision")
        XCTAssertEqual(try b.posts().fetchedAt, taken.fetchedAt)
    }
}
