import Foundation
import Synchronization
import TestFixtures
import TidingsTesting
import XCTest

/// Shared bits of the posts tests: a feed with an integer and a string id (and extra fields),
/// a server pointed at an `UpstreamServer`, and readers for the `GET /posts` object.
enum PostsFixture {
    /// A feed of 10,000 posts, about 2 MB: big enough that a copy per stream shows in memory.
    static func twoMegabyteFeed() -> String {
        let posts = (0..<10_000).map { index in
            #"{"id":\#(index),"title":"post \#(index)","body":"\#(String(repeating: "x", count: 160))"}"#
        }
        return "[" + posts.joined(separator: ",") + "]"
    }

    static let feed = #"""
    [{"id": 1, "userId": 7, "title": "One", "body": "first", "tags": ["a", "b"]},
     {"id": "two-2", "title": "Two", "body": "second", "extra": {"nested": true, "n": 1.5}},
     {"id": "a b", "title": "Spaced", "body": "third"}]
    """#

    static let otherFeed = #"[{"id": 9, "title": "Nine", "body": "changed"}]"#

    /// `tidings --feed-url <upstream> --feed-timeout 1 --feed-refresh 0 <extra>`.
    static func server(_ upstream: UpstreamServer, timeout: Double = 1, refresh: Double = 0,
                       _ extra: [String] = []) throws -> TidingsProcess {
        try TidingsProcess(arguments: ["--feed-url", upstream.url, "--feed-timeout", String(timeout),
                                       "--feed-refresh", String(refresh)] + extra)
    }
}

/// `GET /posts` as a value.
struct PostsState {
    let json: [String: Any]
    var state: String? { json["state"] as? String }
    var posts: [[String: Any]] { json["posts"] as? [[String: Any]] ?? [] }
    var postTitles: [String] { posts.compactMap { $0["title"] as? String } }
    var fetchedAt: String? { json["fetchedAt"] as? String }
    var error: [String: Any]? { json["error"] as? [String: Any] }
    var message: String { error?["message"] as? String ?? "" }
    var source: String? { json["source"] as? String }
}

extension TidingsProcess {
    /// `GET /posts[?wait=N]`, checked to be a 200 JSON state object.
    func posts(wait: Int? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> PostsState {
        let reply = try connect(timeout: Double(wait ?? 0) + 10).request("GET", wait.map { "/posts?wait=\($0)" } ?? "/posts")
        XCTAssertEqual(reply.status, 200, reply.text, file: file, line: line)
        XCTAssertEqual(reply.header("Content-Type"), "application/json", file: file, line: line)
        let json = try XCTUnwrap(reply.json, "not a JSON object: \(reply.text)", file: file, line: line)
        for key in ["state", "posts", "fetchedAt", "error", "source"] {
            XCTAssertTrue(json.keys.contains(key), "GET /posts lacks \(key): \(reply.text)", file: file, line: line)
        }
        return PostsState(json: json)
    }

    /// Loads the feed (GET /posts?wait=15) and checks it ended `expected`. The answer comes as
    /// soon as the load ends: 15 s is room for a loaded machine (at load 14, a load held by a
    /// 1 s upstream had not reached the upstream after 5 s), not a time any test waits.
    @discardableResult
    func settledPosts(_ expected: String, file: StaticString = #filePath, line: UInt = #line) throws -> PostsState {
        let state = try posts(wait: 15, file: file, line: line)
        XCTAssertEqual(state.state, expected, "\(state.json)", file: file, line: line)
        return state
    }
}

/// Runs `body` on `count` threads at once (released together) and waits for all.
func concurrently(_ count: Int, timeout: Double = 20, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    let gate = DispatchSemaphore(value: 0)
    for index in 0..<count {
        group.enter()
        Thread.detachNewThread {
            gate.wait()
            body(index)
            group.leave()
        }
    }
    for _ in 0..<count { gate.signal() }
    _ = group.wait(timeout: .now() + timeout)
}

/// A value several threads write into.
final class Collected<Value: Sendable>: Sendable {
    private let items = Mutex<[Value]>([])
    func append(_ value: Value) { items.withLock { $0.append(value) } }
    var all: [Value] { items.withLock { $0 } }
}

/// The server's address, for requests from other threads (`TidingsProcess` stays on the test's).
struct ServerAddress: Sendable {
    let port: Int
    /// One request on a fresh connection.
    func request(_ method: String, _ target: String) throws -> HTTPReply {
        try HTTPConnection(port: port).request(method, target)
    }
}

extension TidingsProcess {
    var address: ServerAddress { ServerAddress(port: port) }
}
