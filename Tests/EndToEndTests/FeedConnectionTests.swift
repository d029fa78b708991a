import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// How the feed's upstream client connects: one keep-alive connection for every fetch, and no
/// proxy but `--feed-proxy` (the environment's `http_proxy` and the like are ignored).
final class FeedConnectionTests: XCTestCase {
    /// Three fetches (the load, a 304, new content) over one connection: the client keeps its
    /// libcurl handles and their connection cache between requests (before: a new handle per
    /// request, so a new connection per fetch).
    func testFetchesReuseTheirConnection() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.keepAlive = true
        upstream.behaviour = .posts(PostsFixture.feed, etag: "v1")
        let server = try PostsFixture.server(upstream)
        defer { server.stop() }
        try server.settledPosts("loaded")
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        try server.settledPosts("loaded")
        upstream.behaviour = .posts(PostsFixture.otherFeed, etag: "v2")
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        XCTAssertEqual(try server.settledPosts("loaded").postTitles, ["Nine"])
        XCTAssertEqual(upstream.requestCount, 3)
        XCTAssertEqual(upstream.requests.map { $0.headers["if-none-match"] }, [nil, "\"v1\"", "\"v1\""])
        XCTAssertEqual(upstream.connectionCount, 1, "every fetch after the first reuses its connection")
    }

    /// `http_proxy` (and its kin) pointing at a proxy that records what it gets: without
    /// `--feed-proxy` the feed is fetched directly and the proxy sees nothing (before: libcurl
    /// followed the variables, so the environment decided where feed requests went).
    func testTheEnvironmentsProxyVariablesAreIgnored() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed)
        let proxy = try UpstreamServer()
        defer { proxy.stop() }
        proxy.behaviour = .posts(PostsFixture.otherFeed)
        let proxyURL = "http://127.0.0.1:\(proxy.port)"
        let server = try TidingsProcess(
            arguments: ["--feed-url", upstream.url, "--feed-timeout", "2", "--feed-refresh", "0"],
            environment: ["http_proxy": proxyURL, "HTTP_PROXY": proxyURL, "all_proxy": proxyURL, "ALL_PROXY": proxyURL])
        defer { server.stop() }
        XCTAssertEqual(try server.settledPosts("loaded").postTitles, ["One", "Two", "Spaced"])
        XCTAssertEqual(upstream.requestCount, 1)
        XCTAssertEqual(proxy.requestCount, 0, "the proxy variables sent the request elsewhere")
    }

    /// `--feed-proxy URL`: every feed request goes through that proxy (an HTTP proxy gets the
    /// absolute URL as its request target), and only through it.
    func testFeedProxySendsFeedRequestsThroughTheProxy() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed)
        let proxy = try UpstreamServer()
        defer { proxy.stop() }
        proxy.behaviour = .posts(PostsFixture.otherFeed)
        let server = try PostsFixture.server(upstream, timeout: 2, ["--feed-proxy", "http://127.0.0.1:\(proxy.port)"])
        defer { server.stop() }
        XCTAssertEqual(try server.settledPosts("loaded").postTitles, ["Nine"], "the answer came from the proxy")
        XCTAssertEqual(proxy.requests.map(\.path), [upstream.url], "an HTTP proxy is asked for the absolute URL")
        XCTAssertEqual(upstream.requestCount, 0)
    }
}
