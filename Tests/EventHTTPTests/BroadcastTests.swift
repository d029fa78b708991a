import EventHTTP
import Foundation
import TestFixtures
import XCTest

/// `HTTPServer.broadcast` and `EventStream.follow`: the workers hand a broadcast frame to each
/// follower of its topic, in order, at most once per order, never at or below where it started.
final class BroadcastTests: XCTestCase {
    private var server: LoopThread!

    override func setUpWithError() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.streamWorkers = 2
        server = try LoopThread(configuration: configuration) { server in
            // /follow/1,2/5: follow topics 1 and 2 from order 5 on.
            server.router.get("/follow/{topics}/{after}") { request, responder in
                let topics = (request.parameters["topics"] ?? "").split(separator: ",").compactMap { Int($0) }
                let after = UInt64(request.parameters["after"] ?? "") ?? 0
                guard let stream = responder.startEventStream(retryMilliseconds: 1000) else { return }
                stream.sendPaced([ServerSentEvent(event: "snapshot", data: "\(after)").encoded])
                stream.follow(topics, after: after)
                StreamBook.shared(server).add(stream)
            }
        }
    }

    override func tearDown() { server.stop() }

    private func open(_ path: String) throws -> HTTPConnection {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
        XCTAssertNotNil(client.readUntil("event: snapshot\n"))
        return client
    }

    private func broadcast(_ topic: Int, _ order: UInt64) {
        server.sync { $0.broadcast(ServerSentEvent(id: "\(order)", event: "t\(topic)", data: "\(order)").encoded, topic: topic, order: order) }
    }

    /// The `id:`s a client received up to and including `last`.
    private func ids(_ client: HTTPConnection, until last: String) -> [String] {
        guard let text = client.readUntil("id: \(last)\n") else { return ["(timed out)"] }
        return text.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("id: ") }.map { String($0.dropFirst(4)) }
    }

    func testFollowersGetEachOrderOnceInOrderAfterTheirStart() throws {
        let late = try open("/follow/1/5")
        let both = try open("/follow/1,2/0")
        let other = try open("/follow/3/0")
        XCTAssertTrue(server.eventually { $0.openStreamCount == 3 })
        broadcast(1, 3)   // `late` started at 5: not for it
        broadcast(2, 6)   // `both` only
        broadcast(1, 6)   // `late`; `both` had 6 already through topic 2
        broadcast(1, 7)
        broadcast(3, 8)
        XCTAssertEqual(ids(late, until: "7"), ["6", "7"])
        XCTAssertEqual(ids(both, until: "7"), ["3", "6", "7"])
        XCTAssertEqual(ids(other, until: "8"), ["8"])
        // Nothing else arrived meanwhile.
        broadcast(1, 9)
        XCTAssertEqual(ids(late, until: "9"), ["9"])
        XCTAssertEqual(ids(both, until: "9"), ["9"])
    }

    func testAClosedFollowerIsForgottenAndTheOthersKeepReceiving() throws {
        var gone: HTTPConnection? = try open("/follow/1/0")
        let stays = try open("/follow/1/0")
        XCTAssertTrue(server.eventually { $0.openStreamCount == 2 })
        broadcast(1, 1)
        XCTAssertEqual(ids(stays, until: "1"), ["1"])
        gone = nil
        XCTAssertTrue(server.eventually { $0.openStreamCount == 1 })
        for order in 2...50 { broadcast(1, UInt64(order)) }
        XCTAssertEqual(ids(stays, until: "50"), (2...50).map(String.init))
        _ = gone
    }
}
