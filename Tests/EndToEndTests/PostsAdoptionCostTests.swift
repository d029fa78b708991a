import Foundation
import Synchronization
import XCTest
import TestFixtures
import TidingsTesting

/// A `posts` event does not make the loop re-parse the whole stored document: this instance's
/// own documents are recognised by their fetch time (read from the document's front), and
/// another instance's are parsed off the loop. Before: each refresh of a 4 MB feed froze the
/// server for about 290 ms.
final class PostsAdoptionCostTests: XCTestCase {
    /// A feed of about `bytes` bytes whose posts say `tag`.
    private static func feed(bytes: Int, tag: String) -> String {
        let post = #"{"id":N,"title":"post N of TAG","body":"\#(String(repeating: "lorem ipsum ", count: 12))"}"#
        var parts: [String] = []
        var size = 2
        var index = 0
        while size < bytes {
            let text = post.replacingOccurrences(of: "N", with: String(index)).replacingOccurrences(of: "TAG", with: tag)
            parts.append(text)
            size += text.utf8.count + 1
            index += 1
        }
        return "[" + parts.joined(separator: ",") + "]"
    }

    /// Refreshes through `writer` again and again, the upstream's content changing every time.
    private func refreshing(_ writer: TidingsProcess, _ upstream: UpstreamServer, while measuring: TidingsProcess,
                            clients: Int = 1) throws -> LoopResponsiveness {
        let feeds = [Self.feed(bytes: 4_000_000, tag: "A"), Self.feed(bytes: 4_000_000, tag: "B")]
        let port = writer.port
        let round = Counter()
        return try LoopResponsiveness.measure(measuring, clients: clients, seconds: 6) { _ in
            upstream.behaviour = .posts(feeds[round.next() % 2])
            let connection = try HTTPConnection(port: port, timeout: 30)
            XCTAssertEqual(try connection.request("POST", "/posts/refresh").status, 202)
            _ = try connection.request("GET", "/posts?wait=10")
        }
    }

    func test_refreshing_a_4_MB_feed_does_not_freeze_the_loop() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(Self.feed(bytes: 4_000_000, tag: "first"))
        let server = try PostsFixture.server(upstream, timeout: 10)
        defer { server.stop() }
        try server.settledPosts("loaded")
        let probe = try refreshing(server, upstream, while: server)
        print("refreshing a 4 MB feed: \(probe.summary)")
        XCTAssertGreaterThanOrEqual(probe.attacks, 3, "the refreshes did not run")
        probe.assertResponsive()
    }

    func test_another_instances_4_MB_documents_are_parsed_off_the_loop() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(Self.feed(bytes: 4_000_000, tag: "first"))
        let directory = try TemporaryDirectory()
        let arguments = ["--feed-url", upstream.url, "--feed-timeout", "10", "--feed-refresh", "0"]
        let a = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { b.stop() }
        try a.settledPosts("loaded")
        XCTAssertTrue(eventually(within: 10) { (try? b.posts().state) == "loaded" })
        let probe = try refreshing(a, upstream, while: b)
        print("B while A refreshes a 4 MB feed: \(probe.summary)")
        XCTAssertGreaterThanOrEqual(probe.attacks, 3)
        probe.assertResponsive()
        // B still takes A's latest posts.
        let latest = try a.posts()
        XCTAssertTrue(eventually(within: 10) { (try? b.posts().fetchedAt) == latest.fetchedAt }, "B did not adopt A's posts")
        XCTAssertEqual(try b.posts().postTitles.first, latest.postTitles.first)
    }

    func test_after_a_restart_with_another_feed_url_the_old_sources_posts_are_not_served_as_loaded() throws {
        let old = try UpstreamServer()
        defer { old.stop() }
        old.behaviour = .posts(#"[{"id":1,"title":"from the old feed","body":"x"}]"#)
        let directory = try TemporaryDirectory()
        let first = try TidingsProcess(arguments: ["--feed-url", old.url, "--feed-refresh", "0"], dataDirectory: directory.url)
        XCTAssertEqual(try first.settledPosts("loaded").postTitles, ["from the old feed"])
        XCTAssertEqual(first.stop(), 0)

        let new = try UpstreamServer()
        defer { new.stop() }
        new.behaviour = .delayed(1, then: .posts(#"[{"id":2,"title":"from the new feed","body":"y"}]"#))
        let second = try TidingsProcess(arguments: ["--feed-url", new.url, "--feed-refresh", "0", "--log-level", "debug"],
                                        dataDirectory: directory.url)
        defer { second.stop() }
        let failuresBefore = testRun?.totalFailureCount ?? 0
        defer {
            if (testRun?.totalFailureCount ?? 0) > failuresBefore { print("--- second instance:\n\(second.log)\n--- upstream: \(new.requests.count) requests on \(new.connectionCount) connections") }
        }
        // A stream opened first shows no posts of the old feed as this feed's.
        let stream = try second.openEventStream("/posts/events")
        let opening = try stream.nextEvent()
        let openingTitles = opening.value?["posts"]?.arrayValue?.compactMap { $0["title"]?.stringValue } ?? []
        if opening.value?["source"]?.stringValue == new.url {
            XCTAssertFalse(openingTitles.contains("from the old feed"), "old posts announced with the new source: \(opening)")
        }
        let during = try second.posts()
        XCTAssertEqual(during.source, new.url)
        XCTAssertFalse(during.postTitles.contains("from the old feed"), "\(during.json)")
        XCTAssertEqual(try second.settledPosts("loaded").postTitles, ["from the new feed"])
    }
}

/// A counter threads can bump.
private final class Counter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
