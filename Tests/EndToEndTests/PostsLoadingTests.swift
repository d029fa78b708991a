import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// The posts feed against a real upstream on loopback: one load however many readers, `?wait=`,
/// single posts, refresh joining, cancel, a responsive loop while the upstream hangs, and the
/// embedded sample feed.
final class PostsLoadingTests: XCTestCase {
    func testFiftyConcurrentColdReadersCauseExactlyOneUpstreamRequest() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .delayed(0.5, then: .posts(PostsFixture.feed))
        let server = try PostsFixture.server(upstream, timeout: 5)
        defer { server.stop() }

        let states = Collected<String>()
        let address = server.address
        concurrently(50) { _ in
            let reply = try? address.request("GET", "/posts")
            states.append(reply.flatMap { $0.status == 200 ? $0.json?["state"] as? String : nil } ?? "error")
        }
        XCTAssertEqual(states.all.count, 50)
        XCTAssertEqual(Set(states.all), ["loading"], "every cold reader sees the one running load")
        let loaded = try server.settledPosts("loaded")
        XCTAssertEqual(loaded.postTitles, ["One", "Two", "Spaced"])
        XCTAssertEqual(upstream.requestCount, 1, "one upstream request for 50 readers")
        // Once loaded, readers are served from memory.
        for _ in 0..<5 { XCTAssertEqual(try server.posts().state, "loaded") }
        XCTAssertEqual(upstream.requestCount, 1)
    }

    func testWaitHoldsTheAnswerUntilLoadedAndStateObjectIsComplete() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .delayed(0.4, then: .posts(PostsFixture.feed))
        let server = try PostsFixture.server(upstream, timeout: 5)
        defer { server.stop() }

        let started = Date()
        let state = try server.settledPosts("loaded")
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertGreaterThan(elapsed, 0.3, "answered before the upstream did")
        XCTAssertLessThan(elapsed, 3)
        XCTAssertEqual(state.source, upstream.url)
        XCTAssertTrue(state.json["error"] is NSNull, "\(state.json)")
        let fetchedAt = try XCTUnwrap(state.fetchedAt)
        XCTAssertNotNil(try? Date(fetchedAt, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)),
                        "fetchedAt is not RFC 3339: \(fetchedAt)")
        XCTAssertLessThan(abs((try Date(fetchedAt, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
            .timeIntervalSinceNow), 30)
        // Extra fields are kept as the upstream sent them.
        let first = state.posts[0]
        XCTAssertEqual(first["tags"] as? [String], ["a", "b"])
        XCTAssertEqual(first["userId"] as? Int, 7)
        XCTAssertEqual((state.posts[1]["extra"] as? [String: Any])?["n"] as? Double, 1.5)
    }

    func testWaitGivesUpAfterNSecondsWithoutBlockingAndRejectsBadValues() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .hang
        let server = try PostsFixture.server(upstream, timeout: 10)
        defer { server.stop() }

        let started = Date()
        let state = try server.posts(wait: 1)
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertEqual(state.state, "loading")
        XCTAssertGreaterThan(elapsed, 0.95)
        XCTAssertLessThan(elapsed, 2.5)

        for bad in ["abc", "31", "-1", "", "nan", "inf", "1,5", "0.5", "1e1"] {
            let reply = try server.get("/posts?wait=\(bad)")
            XCTAssertEqual(reply.status, 400, "wait=\(bad): \(reply.text)")
            XCTAssertEqual(reply.header("Content-Type"), "application/problem+json")
            XCTAssertEqual(reply.json?["detail"] as? String, "'wait' must be a whole number of seconds from 0 to 30, not '\(bad)'.")
        }
        let immediate = Date()
        XCTAssertEqual(try server.posts(wait: 0).state, "loading")
        XCTAssertLessThan(Date().timeIntervalSince(immediate), 0.5, "wait=0 answers at once")
        XCTAssertEqual(upstream.requestCount, 1)
    }

    func testSinglePostsByIntegerAndStringIds() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .delayed(0.3, then: .posts(PostsFixture.feed))
        let server = try PostsFixture.server(upstream)
        defer { server.stop() }

        let early = try server.get("/posts/1")
        XCTAssertEqual(early.status, 404, "nothing is loaded yet")
        XCTAssertEqual(early.header("Content-Type"), "application/problem+json")
        usleep(200_000)
        XCTAssertEqual(upstream.requestCount, 0, "a lookup does not start a load")
        XCTAssertEqual(try server.posts().state, "loading")
        try server.settledPosts("loaded")

        let one = try server.get("/posts/1")
        XCTAssertEqual(one.status, 200, one.text)
        XCTAssertEqual(one.json?["id"] as? Int, 1)
        XCTAssertEqual(one.json?["title"] as? String, "One")
        XCTAssertEqual(one.json?["tags"] as? [String], ["a", "b"])
        let two = try server.get("/posts/two-2")
        XCTAssertEqual(two.status, 200, two.text)
        XCTAssertEqual(two.json?["id"] as? String, "two-2")
        XCTAssertEqual((two.json?["extra"] as? [String: Any])?["nested"] as? Bool, true)
        let spaced = try server.get("/posts/a%20b")
        XCTAssertEqual(spaced.status, 200, spaced.text)
        XCTAssertEqual(spaced.json?["title"] as? String, "Spaced")
        XCTAssertEqual(try server.get("/posts/999").status, 404)
        XCTAssertEqual(try server.get("/posts/Two-2").status, 404, "ids are matched exactly")
        XCTAssertEqual(try server.request("HEAD", "/posts/1").status, 200)
    }

    func testConcurrentRefreshesJoinOneUpstreamRequest() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed)
        let server = try PostsFixture.server(upstream, timeout: 5)
        defer { server.stop() }
        try server.settledPosts("loaded")
        XCTAssertEqual(upstream.requestCount, 1)

        upstream.behaviour = .delayed(0.5, then: .posts(PostsFixture.otherFeed))
        let statuses = Collected<Int>()
        let address = server.address
        concurrently(10) { _ in
            let reply = try? address.request("POST", "/posts/refresh")
            statuses.append(reply?.status ?? 0)
            if let state = reply?.json?["state"] as? String, state != "loading" { statuses.append(-1) }
        }
        XCTAssertEqual(statuses.all, Array(repeating: 202, count: 10))
        let refreshed = try server.settledPosts("loaded")
        XCTAssertEqual(refreshed.postTitles, ["Nine"])
        XCTAssertEqual(upstream.requestCount, 2, "ten refreshes during one load: one upstream request")
    }

    func testCancelDuringASlowLoad() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .hang
        let server = try PostsFixture.server(upstream, timeout: 10)
        defer { server.stop() }

        // Cold: a waiting reader is answered as soon as the load is cancelled, with `idle`.
        XCTAssertEqual(try server.posts().state, "loading")
        let waited = Collected<(String, Double)>()
        let address = server.address
        let waiter = Thread {
            let started = Date()
            let reply = try? address.request("GET", "/posts?wait=10")
            waited.append((reply?.json?["state"] as? String ?? "error", Date().timeIntervalSince(started)))
        }
        waiter.start()
        usleep(300_000)
        let cancel = try server.request("POST", "/posts/cancel")
        XCTAssertEqual(cancel.status, 200)
        XCTAssertEqual(cancel.json?["cancelled"] as? Bool, true)
        XCTAssertTrue(eventually(within: 3) { !waited.all.isEmpty })
        XCTAssertEqual(waited.all.first?.0, "idle")
        XCTAssertLessThan(waited.all.first?.1 ?? 99, 2)
        XCTAssertEqual(try server.request("POST", "/posts/cancel").json?["cancelled"] as? Bool, false)

        // With posts held: cancelling a refresh returns to `loaded` with the previous posts.
        upstream.behaviour = .posts(PostsFixture.feed)
        try server.settledPosts("loaded")
        upstream.behaviour = .hang
        XCTAssertEqual(try server.request("POST", "/posts/refresh").json?["state"] as? String, "loading")
        usleep(200_000)
        XCTAssertEqual(try server.request("POST", "/posts/cancel").json?["cancelled"] as? Bool, true)
        let after = try server.posts()
        XCTAssertEqual(after.state, "loaded")
        XCTAssertEqual(after.postTitles, ["One", "Two", "Spaced"])
        XCTAssertEqual(try server.request("POST", "/posts/cancel").json?["cancelled"] as? Bool, false)
    }

    func testServerAnswersPromptlyWhileTheUpstreamHangs() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .hang
        let server = try PostsFixture.server(upstream, timeout: 10)
        defer { server.stop() }
        XCTAssertEqual(try server.posts().state, "loading")
        // A reader holding a ?wait= must not hold anyone else either.
        let address = server.address
        let holder = Thread { _ = try? address.request("GET", "/posts?wait=5") }
        holder.start()
        usleep(100_000)

        let connection = try server.connect()
        var slowest = 0.0
        for target in ["/healthz", "/preferences", "/things", "/posts", "/posts/1", "/sample/posts"] {
            for _ in 0..<5 {
                let started = Date()
                let reply = try connection.request("GET", target)
                slowest = max(slowest, Date().timeIntervalSince(started))
                XCTAssertLessThan(reply.status, 500, target)
            }
        }
        XCTAssertLessThan(slowest, 0.1, "a request took \(slowest) s while the upstream hung")
        XCTAssertEqual(try server.posts().state, "loading")
        XCTAssertEqual(upstream.requestCount, 1)
    }

    func testEmbeddedSampleFeedWithoutFeedURL() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let state = try server.settledPosts("loaded")
        XCTAssertEqual(state.posts.count, 8)
        XCTAssertEqual(state.source, "http://127.0.0.1:\(server.port)/sample/posts")
        XCTAssertEqual(try server.get("/posts/3").json?["title"] as? String, "Remote data that loads itself once")

        let sample = try server.get("/sample/posts")
        XCTAssertEqual(sample.status, 200)
        XCTAssertEqual(sample.header("Content-Type"), "application/json")
        let etag = try XCTUnwrap(sample.header("ETag"))
        let lastModified = try XCTUnwrap(sample.header("Last-Modified"))
        XCTAssertEqual((try JSONSerialization.jsonObject(with: Data(sample.body)) as? [Any])?.count, 8)
        XCTAssertEqual(try server.get("/sample/posts", headers: ["If-None-Match": etag]).status, 304)
        XCTAssertEqual(try server.get("/sample/posts", headers: ["If-None-Match": "\"other\""]).status, 200)
        XCTAssertEqual(try server.get("/sample/posts", headers: ["If-Modified-Since": lastModified]).status, 304)
        XCTAssertEqual(try server.get("/sample/posts", headers: ["If-Modified-Since": "Mon, 01 Jan 2024 00:00:00 GMT"]).status, 200)
        XCTAssertEqual(try server.get("/sample/posts").header("Last-Modified"), lastModified, "a fixed date")
        // The loader asked conditionally on refresh: the sample answers 304, posts stay.
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        let again = try server.settledPosts("loaded")
        XCTAssertEqual(again.fetchedAt, state.fetchedAt)
    }

    func testEmbeddedFeedIsFetchedOverLoopbackWhenListeningOnAllAddresses() throws {
        let server = try TidingsProcess(arguments: ["--host", "0.0.0.0"])
        defer { server.stop() }
        let state = try server.settledPosts("loaded")
        XCTAssertEqual(state.source, "http://127.0.0.1:\(server.port)/sample/posts")
        XCTAssertEqual(state.posts.count, 8)
    }
}

/// Graceful shutdown with the feed busy: a hanging upstream load and a reader holding
/// `?wait=30` do not keep the process alive.
final class PostsShutdownTests: XCTestCase {
    func testSigtermWhileLoadingAndWaitingExitsPromptly() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .hang
        let server = try PostsFixture.server(upstream, timeout: 30, refresh: 1)
        XCTAssertEqual(try server.posts().state, "loading")
        let answered = Collected<Int>()
        let address = server.address
        let waiter = Thread {
            answered.append((try? address.request("GET", "/posts?wait=30"))?.status ?? -1)
        }
        waiter.start()
        usleep(200_000)
        let started = Date()
        XCTAssertEqual(server.stop(signal: SIGTERM), 0, server.log)
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "shutdown waited for the feed")
        XCTAssertTrue(eventually(within: 2) { !answered.all.isEmpty })
        XCTAssertEqual(answered.all.first, 200, "the waiting reader got its answer before the exit")
    }
}
