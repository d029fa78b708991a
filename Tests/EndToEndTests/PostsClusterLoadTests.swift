import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// One upstream fetch at a time for the whole cluster: a load started on one instance — a first
/// read, or `POST /posts/refresh` — is joined by the other instance instead of fetched a second
/// time, and both then serve the one loaded document. Before, a refresh on B while A was loading
/// fetched again (2 of 4 runs), and each instance served its own fetch.
final class PostsClusterLoadTests: XCTestCase {
    func test_loads_and_refreshes_on_two_instances_at_once_fetch_upstream_once() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .delayed(1, then: .posts(PostsFixture.feed))
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let arguments = ["--database-url", cluster.url, "--feed-url", upstream.url, "--feed-timeout", "10", "--feed-refresh", "0"]
        let a = try TidingsProcess(arguments: arguments)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments)
        defer { b.stop() }

        // Two cold readers, one on each instance, at once.
        let first = Self.waitingAnswers(from: [a.address, b.address]) { address in
            _ = try? address.request("GET", "/posts")
        }
        XCTAssertEqual(first.map(\.state), ["loaded", "loaded"], "\(first.map(\.json))")
        XCTAssertEqual(first[0].json as NSDictionary, first[1].json as NSDictionary)
        XCTAssertEqual(upstream.requestCount, 1, "two first loads at once: one upstream request")

        // Four rounds of a refresh asked of each instance at once, over a slow upstream.
        for round in 0..<4 {
            upstream.behaviour = .delayed(1, then: .posts(#"[{"id": \#(round), "title": "Round \#(round)", "body": "x"}]"#))
            let before = upstream.requestCount
            let answers = Self.waitingAnswers(from: [a.address, b.address]) { address in
                XCTAssertEqual(try? address.request("POST", "/posts/refresh").status, 202)
            }
            XCTAssertEqual(answers.map(\.postTitles), [["Round \(round)"], ["Round \(round)"]], "round \(round)")
            XCTAssertEqual(answers[0].fetchedAt, answers[1].fetchedAt, "round \(round): one document")
            XCTAssertNotNil(answers[0].fetchedAt)
            XCTAssertEqual(upstream.requestCount - before, 1, "round \(round): two refreshes at once, one upstream request; logs:\n"
                           + (a.log + b.log).split(separator: "\n").filter { $0.contains("posts") }.joined(separator: "\n"))
        }
    }

    /// Runs `start` against every address at once, then answers each one's `GET /posts?wait=10`.
    private static func waitingAnswers(from addresses: [ServerAddress], start: @escaping @Sendable (ServerAddress) -> Void) -> [PostsState] {
        concurrently(addresses.count) { start(addresses[$0]) }
        let answers = Collected<Answer>()
        concurrently(addresses.count) { index in
            guard let reply = try? addresses[index].request("GET", "/posts?wait=10") else { return }
            answers.append(Answer(index: index, body: reply.body))
        }
        return answers.all.sorted { $0.index < $1.index }.map {
            PostsState(json: ((try? JSONSerialization.jsonObject(with: Data($0.body))) as? [String: Any]) ?? [:])
        }
    }

    private struct Answer: Sendable {
        let index: Int
        let body: [UInt8]
    }
}
