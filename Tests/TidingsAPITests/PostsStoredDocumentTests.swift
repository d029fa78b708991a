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
        app = try makeApp(feedURL: Self.feedURL)
    }

    private func makeApp(feedURL: String) throws -> TidingsApplication {
        var configuration = TidingsConfiguration()
        configuration.dataDir = directory.path
        configuration.feedURL = feedURL
        configuration.feedRefresh = 0
        configuration.feedTimeout = 1
        return try TidingsApplication(configuration: configuration, loop: try EventLoop())
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
                                 firstID: Int = 1, count: Int = 1, source: String = feedURL) -> String {
        let posts = (firstID..<(firstID + count)).map { #"{"body":"b","id":\#($0),"title":"\#(title)"}"# }
        return #"{"error":\#(error),"fetchedAt":"\#(fetchedAt)","posts":[\#(posts.joined(separator: ","))],"#
            + #""source":"\#(source)","state":"\#(state)"}"#
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
        let document = try XCTUnwrap(TestFixtures.JSONValue.parse(stored.document.utf8))
        XCTAssertEqual(document["source"], .string(Self.feedURL))
        XCTAssertTrue(["loading", "failed"].contains(document["state"]?.stringValue), stored.document)
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

    func testALoadThatEndsBehindAnotherInstancesNewerPostsDoesNotStoreItsOutcome() async throws {
        // An upstream that takes the connection and never answers: a refresh here runs until
        // the feed's timeout (1 s) and fails.
        let silent = try SilentListener()
        defer { silent.close() }
        app = try makeApp(feedURL: silent.url)
        let other = try SQLiteStore(directory: directory)
        let old = Self.document(state: "loaded", fetchedAt: "2026-11-26T10:00:00.000Z", title: "old", source: silent.url)
        _ = try await storeElsewhere(old, in: other)
        _ = try await get("/posts")
        XCTAssertTrue(app.resources.state.posts.map { $0.document == old } ?? false)

        // A refresh starts here; meanwhile another instance stores newer posts (this loader is
        // busy, so it cannot take them yet); then the refresh fails.
        let refresh = await app.router.respond(to: Request(method: .post, target: "/posts/refresh", headers: [:], body: []))
        XCTAssertEqual(refresh.response?.status, .accepted)
        let newer = Self.document(state: "loaded", fetchedAt: "2026-11-26T12:00:00.000Z", title: "newer", firstID: 2,
                                  source: silent.url)
        let newest = try await storeElsewhere(newer, in: other)
        // `?wait=` answers once the refresh ended (here: timed out), and what it ended in is stored.
        let started = ContinuousClock.now
        _ = try await get("/posts?wait=5")
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(4), "the refresh did not end")
        await app.resources.writes.drain()
        XCTAssertEqual(app.resources.state.posts?.revision, newest, "the failure over the older posts was stored over the newer ones")
        let answer = try await get("/posts")
        XCTAssertEqual(String(decoding: answer.body, as: UTF8.self), newer)
        // Once its load ended, this instance takes the newer posts too.
        let tookNewer = await eventually(within: 10) { (try? await self.get("/posts/2"))?.status == .ok }
        XCTAssertTrue(tookNewer, "the newer posts were not taken after the load ended")
        await other.close()
    }
}

/// A TCP listener on loopback that never accepts: connections complete in the kernel's backlog
/// and wait for an answer that never comes.
private final class SilentListener {
    private let fd: Int32
    let url: String

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(fd, address, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, address, &length) == 0
            }
        }
        guard bound else {
            _ = Glibc.close(fd)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        self.fd = fd
        url = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/feed"
    }

    func close() { _ = Glibc.close(fd) }
}
