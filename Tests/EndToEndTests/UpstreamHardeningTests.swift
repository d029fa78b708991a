import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// The posts upstream client against a hostile upstream on loopback: a gzip bomb is refused
/// unread (memory measured from /proc), redirects leave neither the scheme, host nor port,
/// and each refusal says which rule refused it.
final class UpstreamHardeningTests: XCTestCase {
    func test_a_gzip_bomb_is_refused_without_inflating_it() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed)
        let server = try PostsFixture.server(upstream, timeout: 10)
        defer { server.stop() }
        _ = try server.settledPosts("loaded")
        let before = try XCTUnwrap(ProcessStats.peakResidentBytes(server.pid))

        // About 3 MB on the wire, 512 MiB inflated: libcurl asked for gzip itself and
        // inflated it all (the process reached 1.1 GB for a 1 GiB bomb). Refused unread, the
        // peak grows by a small fraction of the inflated size (the baseline is the peak after
        // a good load in this run).
        let inflated = 512 << 20
        upstream.behaviour = .gzipBomb(inflated: inflated)
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        let failed = try server.settledPosts("failed")
        XCTAssertEqual(failed.message, "The upstream feed's answer was refused: it came with Content-Encoding 'gzip' although an uncompressed body was asked for.")
        XCTAssertEqual(failed.postTitles, ["One", "Two", "Spaced"], "the last good posts are kept")
        let after = try XCTUnwrap(ProcessStats.peakResidentBytes(server.pid))
        XCTAssertLessThan(after - before, inflated / 8, "peak memory grew by \((after - before) >> 10) KiB")
        XCTAssertEqual(upstream.requests.last?.headers["accept-encoding"], "identity", "an uncompressed body is asked for")
    }

    /// An identity body that never ends, sent as fast as loopback takes it: the client stops
    /// reading at the 8 MiB bound, so the server's peak memory stays within 8 MiB plus a little
    /// (FoundationNetworking's URLSession queued what libcurl read ahead of the limit check:
    /// one refresh in four peaked 200 MB over the baseline), and the loop stays free meanwhile.
    func test_an_endless_body_is_cut_off_at_the_limit_without_buffering_past_it() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed)
        let server = try PostsFixture.server(upstream, timeout: 10)
        defer { server.stop() }
        _ = try server.settledPosts("loaded")
        let before = try XCTUnwrap(ProcessStats.peakResidentBytes(server.pid))

        upstream.behaviour = .endless
        let messages = Collected<String>()
        let probe = try LoopResponsiveness.measure(server, clients: 1, seconds: 4) { connection in
            XCTAssertEqual(try connection.request("POST", "/posts/refresh").status, 202)
            let settled = try connection.request("GET", "/posts?wait=10")
            let error = settled.json?["error"] as? [String: Any]
            messages.append("\(settled.json?["state"] ?? "?"): \(error?["message"] ?? "no error")")
        }
        let after = try XCTUnwrap(ProcessStats.peakResidentBytes(server.pid))
        print("endless upstream body: \(messages.all.count) refreshes; peak RSS \(before >> 10) -> \(after >> 10) KiB; \(probe.summary)")
        XCTAssertGreaterThanOrEqual(messages.all.count, 3, "too few refreshes to tell")
        for message in messages.all {
            XCTAssertEqual(message, "failed: The upstream feed's answer is larger than the 8 MiB limit.")
        }
        // Bounded by the limit: a few times the 8 MiB the client may hold, never what the
        // upstream sends (one refresh in four used to peak 200 MB over the baseline).
        let limit = 8 << 20
        XCTAssertLessThan(after - before, 4 * limit, "peak memory grew by \((after - before) >> 10) KiB for an 8 MiB limit")
        probe.assertResponsive()
        XCTAssertGreaterThan(upstream.requestCount, messages.all.count, "each refresh went upstream")
    }

    /// The upstream's head is bounded too: 80 KiB of fields is refused with a message saying so
    /// (a small head of the same kind is read as usual).
    func test_an_upstream_head_over_64_KiB_is_refused() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .hugeHead(kibibytes: 8)
        let server = try PostsFixture.server(upstream, timeout: 5)
        defer { server.stop() }
        XCTAssertEqual(try server.settledPosts("loaded").posts.count, 0, "an 8 KiB head is fine")
        upstream.behaviour = .hugeHead(kibibytes: 80)
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        let failed = try server.settledPosts("failed")
        XCTAssertEqual(failed.message, "The upstream feed's answer was refused: its header section is larger than 64 KiB.")
    }

    func test_redirects_only_to_the_same_scheme_host_and_port() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        let elsewhere = try UpstreamServer()   // an "internal service" on another port
        defer { elsewhere.stop() }
        elsewhere.behaviour = .posts(#"[{"id": 1, "title": "internal secret", "body": "x"}]"#)
        let server = try PostsFixture.server(upstream, timeout: 5)
        defer { server.stop() }

        let rule = "only redirects to the same scheme, host and port (http://127.0.0.1:\(upstream.port)) are followed"
        let refusals: [(String, String)] = [
            ("http://127.0.0.1:\(elsewhere.port)/posts", "http://127.0.0.1:\(elsewhere.port)"),
            ("http://localhost:\(upstream.port)/posts", "http://localhost:\(upstream.port)"),
            ("file:///etc/passwd", "'file:///etc/passwd'"),
            ("https://127.0.0.1:\(upstream.port)/posts", "https://127.0.0.1:\(upstream.port)"),
        ]
        for (location, named) in refusals {
            upstream.behaviour = .redirect(location)
            XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
            let failed = try server.settledPosts("failed")
            XCTAssertEqual(failed.message, "The upstream feed's answer was refused: a redirect to \(named) was refused: \(rule).", location)
            XCTAssertTrue(failed.postTitles.isEmpty, "\(location): posts served from the redirect target")
        }
        XCTAssertEqual(elsewhere.requestCount, 0, "the off-site target was fetched")

        // Same scheme, host and port: followed.
        upstream.behaviour = .redirect("/posts?page=1")
        XCTAssertEqual(try server.request("POST", "/posts/refresh").status, 202)
        let state = try server.posts(wait: 5)
        // The upstream redirects every request, so this ends in too many redirects, but each
        // hop stayed on the same origin.
        XCTAssertEqual(state.state, "failed")
        XCTAssertEqual(state.message, "The upstream feed's answer was refused: it redirected more than 8 times.")
        XCTAssertGreaterThan(upstream.requestCount, 2, "the same-origin redirect was not followed")
    }
}
