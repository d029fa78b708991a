import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// A cold instance's `loading` never replaces another instance's `loaded`. B's view of the
/// store is held back (its PostgreSQL connection goes through a relay the test pauses) while A
/// loads the feed; B's first reader then makes B decide on a view with nothing stored, and B's
/// write reaches the store only after A's `loaded`. Before the posts cycle decided against the
/// store's revision, B's `loading` was stored over A's `loaded` (every instance announced the
/// feed going back to loading, and B fetched the feed a second time); now the store refuses
/// B's write and B, caught up, takes A's posts.
final class PostsColdInstanceRaceTests: XCTestCase {
    func test_a_cold_instances_loading_never_replaces_another_instances_loaded() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed)
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let relay = try PausableRelay(to: cluster.port)
        defer { relay.stop() }
        let feed = ["--feed-url", upstream.url, "--feed-timeout", "5", "--feed-refresh", "0"]
        let a = try TidingsProcess(arguments: ["--database-url", cluster.url] + feed)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: ["--database-url", "postgres://postgres@127.0.0.1:\(relay.port)/\(cluster.database)"] + feed)
        defer { b.stop() }

        let stream = try a.openEventStream("/posts/events")
        XCTAssertEqual(try stream.nextEvent().json?["state"] as? String, "idle")

        // B hears nothing of A from here on, and what B commits waits.
        relay.pause()
        let loaded = try a.settledPosts("loaded")
        var announced = try stream.nextEvent()
        if announced.json?["state"] as? String == "loading" { announced = try stream.nextEvent() }
        XCTAssertEqual(announced.json?["state"] as? String, "loaded")
        XCTAssertEqual(announced.json?["fetchedAt"] as? String, loaded.fetchedAt)

        // B's first reader: B sees nothing stored and decides to show `loading`.
        let bAddress = b.address
        let firstRead = Collected<Int>()
        Thread.detachNewThread { firstRead.append((try? bAddress.request("GET", "/posts"))?.status ?? 0) }
        Thread.sleep(forTimeInterval: 0.5)
        relay.resume()

        // B serves A's document, and the next event A announces is the next change: new posts
        // a client asks for — not B's `loading` over A's `loaded`.
        XCTAssertTrue(eventually(within: 10) { (try? b.posts().fetchedAt) == loaded.fetchedAt },
                      "B did not come to serve A's posts: \(String(describing: try? b.posts().json))")
        XCTAssertEqual(try b.posts().state, "loaded")
        XCTAssertTrue(eventually(within: 10) { firstRead.all == [200] }, "B's first read was not answered")
        upstream.behaviour = .posts(PostsFixture.otherFeed)
        XCTAssertEqual(try a.request("POST", "/posts/refresh").status, 202)
        let next = try stream.nextEvent(timeout: 10)
        XCTAssertEqual(next.json?["state"] as? String, "loaded", "the next event is not the later change: \(next.data)")
        XCTAssertEqual((next.json?["posts"] as? [[String: Any]])?.first?["title"] as? String, "Nine",
                       "the next event is not the later change: \(next.data)")
        XCTAssertEqual(upstream.requestCount, 2, "one upstream fetch per load: A's first load and A's refresh")
    }
}
