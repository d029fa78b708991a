import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// `posts` events on `/posts/events` and `/events`: one per change a client cares about, none
/// for a 304 or an identical body, ids that are revisions, in the order the states happened.
final class PostsEventsTests: XCTestCase {
    /// Reads `posts` events until one has `state` (or the timeout passes); returns them all.
    private func events(until state: String, on stream: EventStreamReader, timeout: Double = 5,
                        file: StaticString = #filePath, line: UInt = #line) throws -> [EventStreamReader.Event] {
        var seen: [EventStreamReader.Event] = []
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let event = try stream.nextEvent(timeout: max(0.05, deadline.timeIntervalSinceNow))
            XCTAssertEqual(event.name, "posts", file: file, line: line)
            seen.append(event)
            if event.json?["state"] as? String == state { return seen }
        }
        XCTFail("no '\(state)' event; saw \(seen.map(\.data))", file: file, line: line)
        return seen
    }

    /// Checks that the next event on `stream` is a `posts` event in `state` whose first post is
    /// titled `title`: the later change a test made after something that must not be announced.
    /// Events come in revision order, so nothing was announced in between when this one is next.
    private func nextIsTheLaterChange(_ stream: EventStreamReader, state: String, firstTitle title: String? = nil,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        let event = try stream.nextEvent(timeout: 5)
        XCTAssertEqual(event.name, "posts", file: file, line: line)
        XCTAssertEqual(event.json?["state"] as? String, state, "the next event is not the later change: \(event.data)",
                       file: file, line: line)
        if let title {
            XCTAssertEqual((event.json?["posts"] as? [[String: Any]])?.first?["title"] as? String, title,
                           "the next event is not the later change: \(event.data)", file: file, line: line)
        }
    }

    func testLoadEmitsEventsAndNotModifiedOrIdenticalBodyEmitsNone() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed, etag: "v1")
        let server = try PostsFixture.server(upstream)
        defer { server.stop() }

        let stream = try server.openEventStream("/posts/events")
        XCTAssertEqual(stream.reply.status, 200)
        let snapshot = try stream.nextEvent()
        XCTAssertEqual(snapshot.name, "posts")
        XCTAssertEqual(snapshot.json?["state"] as? String, "idle")
        XCTAssertEqual(snapshot.json?["source"] as? String, upstream.url)
        let multiplexed = try server.openEventStream("/events?topics=posts")
        XCTAssertEqual(try multiplexed.nextEvent().json?["state"] as? String, "idle")

        // The first reader starts the load: the stream follows it to `loaded`.
        XCTAssertEqual(try server.posts().state, "loading")
        let first = try events(until: "loaded", on: stream)
        let ids = first.compactMap { $0.id.flatMap(UInt64.init) }
        XCTAssertEqual(ids.count, first.count, "every event has a revision id")
        XCTAssertEqual(ids, ids.sorted())
        XCTAssertEqual(Set(ids).count, ids.count)
        XCTAssertTrue(ids.allSatisfy { $0 > UInt64(snapshot.id ?? "0")! })
        XCTAssertLessThanOrEqual(first.count, 2, "loading and loaded at most: \(first.map(\.data))")
        let loadedEvent = try XCTUnwrap(first.last)
        let current = try server.get("/posts")
        XCTAssertEqual(loadedEvent.data, current.text, "the event carries the GET /posts object")
        XCTAssertEqual(current.header("Tidings-Revision"), loadedEvent.id)
        XCTAssertEqual(try events(until: "loaded", on: multiplexed).last?.data, loadedEvent.data)

        // A refresh answered 304: no event at all, posts and fetchedAt unchanged.
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        XCTAssertEqual(try server.settledPosts("loaded").fetchedAt, loadedEvent.json?["fetchedAt"] as? String)
        XCTAssertEqual(upstream.requestCount, 2)
        XCTAssertEqual(upstream.requests.last?.headers["if-none-match"], "\"v1\"", "conditional request")

        // The same body without validators: identical, so no event either.
        upstream.behaviour = .posts(PostsFixture.feed)
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        try server.settledPosts("loaded")
        XCTAssertEqual(upstream.requestCount, 3)

        // New content: an event with it, and on both streams it is the next event after the
        // first load's — the 304 and the identical body announced nothing (not even `loading`).
        upstream.behaviour = .posts(PostsFixture.otherFeed)
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        let changed = try stream.nextEvent(timeout: 5)
        XCTAssertEqual(changed.json?["state"] as? String, "loaded", changed.data)
        XCTAssertEqual((changed.json?["posts"] as? [[String: Any]])?.first?["title"] as? String, "Nine")
        XCTAssertGreaterThan(UInt64(changed.id ?? "0")!, UInt64(loadedEvent.id ?? "0")!)
        try nextIsTheLaterChange(multiplexed, state: "loaded", firstTitle: "Nine")
    }

    func testSlowRefreshFailureAndCancelAreAnnouncedInOrder() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed)
        let server = try PostsFixture.server(upstream, timeout: 5)
        defer { server.stop() }
        try server.settledPosts("loaded")
        let stream = try server.openEventStream("/posts/events")
        // The snapshot shows the last announced state; the announcement of `loaded` may follow it.
        _ = try events(until: "loaded", on: stream)

        // A slow refresh that ends changing nothing (cancelled here) is invisible to
        // subscribers, whatever state it passed through (openapi.yaml, Posts).
        upstream.behaviour = .hang
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        XCTAssertEqual(try server.posts().state, "loading")
        XCTAssertEqual(try server.request("POST", "/posts/cancel").json?["cancelled"] as? Bool, true)
        XCTAssertEqual(try server.posts().state, "loaded")

        // A failure is announced with its message — as the next event: neither the refresh in
        // progress over held posts nor the return to the same posts was news. The same failure
        // again is not news either (the next event below is the return to loaded).
        upstream.behaviour = .status(502)
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        let failed = try stream.nextEvent(timeout: 5)
        XCTAssertEqual(failed.json?["state"] as? String, "failed", "the next event is not the failure: \(failed.data)")
        XCTAssertEqual((failed.json?["error"] as? [String: Any])?["upstreamStatus"] as? Int, 502)
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        try server.settledPosts("failed")

        // Cancelling a refresh after a failure returns to the previous posts: that is news
        // (once), though the refresh itself was never announced as loading.
        upstream.behaviour = .delayed(0.2, then: .posts(PostsFixture.feed))
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        XCTAssertEqual(try server.request("POST", "/posts/cancel").json?["cancelled"] as? Bool, true)
        let settled = try server.posts()
        XCTAssertEqual(settled.state, "loaded", "cancel returns to the previous posts")
        let back = try stream.nextEvent(timeout: 2)
        XCTAssertEqual(back.json?["state"] as? String, "loaded", "failed → loaded is news, and the repeated failure was not")
        XCTAssertEqual((back.json?["posts"] as? [[String: Any]])?.first?["title"] as? String, "One")

        // Once: the next event is the next change, new posts.
        upstream.behaviour = .posts(PostsFixture.otherFeed)
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        try nextIsTheLaterChange(stream, state: "loaded", firstTitle: "Nine")
    }

    func testPeriodicRefreshAnnouncesOnlyNewContent() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed, etag: "v1")
        let server = try PostsFixture.server(upstream, refresh: 0.5)
        defer { server.stop() }
        try server.settledPosts("loaded")
        let stream = try server.openEventStream("/posts/events")
        // The snapshot shows the last announced state; the announcement of `loaded` may follow it.
        _ = try events(until: "loaded", on: stream)
        // Background refreshes answered 304: silent — the next event is the new content, which
        // the next background refresh picks up, as one event.
        XCTAssertTrue(eventually(within: 3) { upstream.requestCount >= 3 })
        upstream.behaviour = .posts(PostsFixture.otherFeed, etag: "v2")
        try nextIsTheLaterChange(stream, state: "loaded", firstTitle: "Nine")
        // The refreshes after it (304 again) are silent too: the next event is the change after them.
        let seen = upstream.requestCount
        XCTAssertTrue(eventually(within: 3) { upstream.requestCount >= seen + 2 })
        upstream.behaviour = .posts(PostsFixture.feed, etag: "v3")
        try nextIsTheLaterChange(stream, state: "loaded", firstTitle: "One")
    }
}
