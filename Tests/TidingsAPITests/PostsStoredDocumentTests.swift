import EventHTTP
import Foundation
import HTTPTypes
import TestFixtures
import TidingsStore
import XCTest
@testable import TidingsAPI

/// The posts feed's state is the stored document: what `GET /posts` and its `ETag` show is the
/// document as it came back through the change path — another instance's as much as this
/// one's — with no copy of the feed's own in between. In-process, the real application over a
/// SQLite directory that a second store (another instance) writes to.
@MainActor
final class PostsStoredDocumentTests: XCTestCase {
    private static let feedURL = "http://127.0.0.1:9/feed"
    private var directory: URL!
    private var app: TidingsApplication!

    override func setUp() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("posts-\(UUID().uuidString)")
        var configuration = TidingsConfiguration()
        configuration.dataDir = directory.path
        configuration.feedURL = Self.feedURL
        configuration.feedRefresh = 0
        configuration.feedTimeout = 1
        app = try TidingsApplication(configuration: configuration, loop: try EventLoop())
    }

    override func tearDown() async throws {
        app = nil
        try? FileManager.default.removeItem(at: directory)
    }

    private func get(_ target: String, headers: HTTPFields = [:]) async throws -> Response {
        let answer = await app.router.respond(to: Request(method: .get, target: target, headers: headers, body: []))
        return try XCTUnwrap(answer.response)
    }

    /// A stored `GET /posts` object, members in the stored order, with `count` posts (ids from `firstID`).
    private static func document(state: String, fetchedAt: String, title: String, error: String = "null",
                                 firstID: Int = 1, count: Int = 1) -> String {
        let posts = (firstID..<(firstID + count)).map { #"{"body":"b","id":\#($0),"title":"\#(title)"}"# }
        return #"{"error":\#(error),"fetchedAt":"\#(fetchedAt)","posts":[\#(posts.joined(separator: ","))],"#
            + #""source":"\#(feedURL)","state":"\#(state)"}"#
    }

    /// Commits `document` as another instance would and waits until this one applied it.
    private func storeElsewhere(_ document: String, in other: SQLiteStore) async throws -> UInt64 {
        let changes = try await other.commit(StoreWrite([.setPosts(document)]))
        let revision = try XCTUnwrap(changes.last?.revision)
        await app.resources.feed.waitUntilApplied(revision)
        return revision
    }

    func testAnotherInstancesDocumentIsWhatThisInstanceServesAndTags() async throws {
        let other = try SQLiteStore(directory: directory)
        let loaded = Self.document(state: "loaded", fetchedAt: "2026-11-26T10:00:00.000Z", title: "from B")
        let first = try await storeElsewhere(loaded, in: other)
        let answer = try await get("/posts")
        XCTAssertEqual(String(decoding: answer.body, as: UTF8.self), loaded)
        XCTAssertEqual(answer.headers[.eTag], "\"\(first)\"")
        let revalidated = try await get("/posts", headers: [.ifNoneMatch: "\"\(first)\""])
        XCTAssertEqual(revalidated.status, .notModified)
        let post = try await get("/posts/1")
        XCTAssertEqual(post.status, .ok, "the stored posts are looked up too")

        // Another instance's failure over the same posts: this instance holds those posts as
        // loaded, but serves what is stored — the failure — under the new revision.
        let failed = Self.document(state: "failed", fetchedAt: "2026-11-26T10:00:00.000Z", title: "from B",
                                   error: #"{"message":"The upstream feed answered with HTTP status 502, not 2xx.","upstreamStatus":502}"#)
        let second = try await storeElsewhere(failed, in: other)
        let afterFailure = try await get("/posts")
        XCTAssertEqual(String(decoding: afterFailure.body, as: UTF8.self), failed)
        XCTAssertEqual(afterFailure.headers[.eTag], "\"\(second)\"")
        let stale = try await get("/posts", headers: [.ifNoneMatch: "\"\(first)\""])
        XCTAssertEqual(stale.status, .ok, "the old tag is stale")

        // Newer posts: served as soon as applied, before this instance has parsed them.
        let newer = Self.document(state: "loaded", fetchedAt: "2026-11-26T11:00:00.000Z", title: "newer from B")
        let third = try await storeElsewhere(newer, in: other)
        let afterNewer = try await get("/posts")
        XCTAssertEqual(String(decoding: afterNewer.body, as: UTF8.self), newer)
        XCTAssertEqual(afterNewer.headers[.eTag], "\"\(third)\"")
        XCTAssertEqual(app.resources.state.posts?.document, newer, "nothing of this instance was stored over it")
        await other.close()
    }

    func testAColdReadIsAnsweredWithTheDocumentItStoredAndItsRevision() async throws {
        let answer = try await get("/posts")
        let stored = try XCTUnwrap(app.resources.state.posts, "the first read's load state was stored before the answer")
        XCTAssertEqual(String(decoding: answer.body, as: UTF8.self), stored.document)
        XCTAssertEqual(answer.headers[.eTag], "\"\(stored.revision)\"")
        XCTAssertTrue(stored.document.hasSuffix(#""source":"\#(Self.feedURL)","state":"loading"}"#)
                      || stored.document.hasSuffix(#","state":"failed"}"#), stored.document)
    }

    func testAnOlderDocumentTakenLateIsNotStoredBackOverANewerOne() async throws {
        let other = try SQLiteStore(directory: directory)
        _ = try await storeElsewhere(Self.document(state: "loaded", fetchedAt: "2026-11-26T10:00:00.000Z", title: "one"), in: other)
        _ = try await get("/posts")
        let first = try await get("/posts/1")
        XCTAssertEqual(first.status, .ok, "the stored posts were taken at the first read")

        // Two documents in one commit: this instance takes the older one (small, parsed first)
        // when the newer one (large) is stored already.
        let older = Self.document(state: "loaded", fetchedAt: "2026-11-26T11:00:00.000Z", title: "two", firstID: 2)
        let newer = Self.document(state: "loaded", fetchedAt: "2026-11-26T12:00:00.000Z", title: "three",
                                  firstID: 3, count: 20_000)
        let changes = try await other.commit(StoreWrite([.setPosts(older), .setPosts(newer)]))
        let newest = try XCTUnwrap(changes.last?.revision)
        await app.resources.feed.waitUntilApplied(newest)
        let tookNewer = await eventually(within: 10) {
            (try? await self.get("/posts/3"))?.status == .ok
        }
        XCTAssertTrue(tookNewer, "the newer posts were never taken")
        await app.resources.writes.drain()
        XCTAssertEqual(app.resources.state.posts?.document, newer, "an older document was stored back over the newer one")
        XCTAssertEqual(app.resources.state.posts?.revision, newest, "this instance stored what it took from the store")
        let answer = try await get("/posts")
        XCTAssertEqual(String(decoding: answer.body, as: UTF8.self), newer)
        await other.close()
    }
}
