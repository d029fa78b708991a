import Foundation
import TestFixtures
import Observing
import OpenCombine
import TidingsClient
import XCTest

/// The things list and the posts feed over the client's one stream.
@MainActor
final class ThingsAndPostsTests: XCTestCase {
    private var directories: [URL] = []

    override func tearDown() async throws {
        directories.forEach(TidingsProcess.removeDirectory)
    }

    private func startServer(_ arguments: [String] = []) throws -> TidingsProcess {
        let directory = TidingsProcess.temporaryDirectory()
        directories.append(directory)
        return try TidingsProcess(arguments: arguments, dataDirectory: directory)
    }

    private func expect(_ what: String, _ body: () async throws(TidingsClientError) -> Void,
                        file: StaticString = #filePath, line: UInt = #line,
                        matches: (TidingsClientError) -> Bool) async {
        do {
            try await body()
            XCTFail("\(what) succeeded", file: file, line: line)
        } catch {
            XCTAssertTrue(matches(error), "\(what): unexpected \(error)", file: file, line: line)
        }
    }

    func testThingsFollowTheServersRulesAndReachOtherClients() async throws {
        let server = try startServer()
        let writer = await connectedClient(server)
        let watcher = await connectedClient(server)
        let seen = Recorder(watcher.things.$things)

        let stored = try await writer.things.add(" yolo ")
        XCTAssertEqual(stored, "YOLO")
        XCTAssertEqual(writer.things.things, ["YOLO"], "the caller sees its own write when add returns")
        await seen.waitForLatest("the watcher's list") { $0 == ["YOLO"] }

        await expect("a duplicate", { () async throws(TidingsClientError) in _ = try await writer.things.add("YOLO") }) {
            if case let .alreadyExists(problem) = $0 { problem.status == 409 } else { false }
        }
        await expect("an empty thing", { () async throws(TidingsClientError) in _ = try await writer.things.add("   ") }) {
            if case .refused = $0 { true } else { false }
        }
        await expect("removing what is not there", { () async throws(TidingsClientError) in try await writer.things.remove("nope") }) {
            if case .notFound = $0 { true } else { false }
        }
        await expect("a replacement with duplicates", { () async throws(TidingsClientError) in
            try await writer.things.replace(with: ["a", "A"])
        }) { if case .refused = $0 { true } else { false } }
        XCTAssertEqual(writer.things.things, ["YOLO"], "nothing applied on error")

        try await writer.things.replace(with: ["btw", "imo"])
        await seen.waitForLatest("the replacement") { $0 == ["BTW", "IMO"] }
        try await writer.things.remove("btw")
        XCTAssertEqual(writer.things.things, ["IMO"])
        await seen.waitForLatest("the removal") { $0 == ["IMO"] }
    }

    func testPostsAreRemoteDataWithTheLoadersStates() async throws {
        let server = try startServer()
        let client = await connectedClient(server)
        let watcher = await connectedClient(server)
        let phases = Recorder(watcher.posts.$state.map(\.phase))
        XCTAssertEqual(client.posts.state.phase, .idle)

        try await client.posts.load(wait: 20)
        XCTAssertEqual(client.posts.state.phase, .loaded)
        // The watcher asked for nothing: the stream brought it the loader's states.
        await phases.waitForLatest("loaded, on the other client's stream") { $0 == .loaded }
        XCTAssertEqual(phases.values.first, .idle)
        XCTAssertFalse(watcher.posts.state.posts.isEmpty)
        XCTAssertEqual(watcher.posts.state.posts, client.posts.state.posts)
        XCTAssertNotNil(watcher.posts.state.fetchedAt)
        XCTAssertNil(watcher.posts.state.error)
    }

    func testAFailedFeedCarriesTheServersMessage() async throws {
        // Nothing listens on port 9 of loopback (discard): the upstream connection fails.
        let server = try startServer(["--feed-url", "http://127.0.0.1:9/posts", "--feed-timeout", "5"])
        let client = await connectedClient(server)
        let watcher = await connectedClient(server)
        let states = Recorder(watcher.posts.$state)
        let own = Recorder(client.posts.$state)
        try await client.posts.load(wait: 20)
        await states.waitForLatest("failed, on the other client's stream") { $0.phase == .failed }
        let message = watcher.posts.state.error?.message ?? ""
        // substring: libcurl's wording of the failure surrounds the address it names.
        XCTAssertTrue(message.contains("127.0.0.1:9"), message)
        // The stream's events may land after the GET's answer; they end at the same state.
        await own.waitForLatest("failed, on the loading client") { $0.error?.message == message }
    }
}
