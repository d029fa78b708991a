@testable import EventHTTP
import HTTPTypes
import TestFixtures
import XCTest

/// A stream a route starts while the router runs in-process (`Router.respond(to:)`): its head
/// passes the middleware, its body is recorded from the `retry:` line on, broadcasts reach it by
/// the same order rule as a worker's stream, HEAD gets the head alone, and the client going away
/// runs the route's `onClose` once.
@MainActor
final class InProcessStreamTests: XCTestCase {
    private struct Stamp: Middleware {
        func finish(_ request: Request, _ response: inout Response) {
            response.headers.append(HTTPField(name: HTTPField.Name("X-Stamped")!, value: "yes"))
        }
    }

    private final class Opened { var stream: EventStream?; var closes = 0 }

    private func server(_ opened: Opened) throws -> HTTPServer {
        let server = HTTPServer(loop: try EventLoop(), configuration: ServerConfiguration(host: "127.0.0.1", port: 0))
        server.router.add(middleware: Stamp())
        server.router.get("/events") { _, responder in
            guard let stream = responder.startEventStream(retryMilliseconds: 1_000) else { return }
            opened.stream = stream
            stream.onClose = { opened.closes += 1 }
            stream.sendPaced([Array("id: 1\ndata: snapshot\n\n".utf8)])
            stream.follow([7], after: 1)
        }
        return server
    }

    private func text(_ stream: InProcessStream) -> String { String(decoding: stream.body, as: UTF8.self) }

    func testTheStreamIsRecordedInOrderAndBroadcastsFollowTheOrderRule() async throws {
        let opened = Opened()
        let server = try server(opened)
        guard case .eventStream(let recorded) = await server.router.respond(to: Request(method: .get, target: "/events")) else {
            return XCTFail("no stream")
        }
        XCTAssertEqual(recorded.head.status, .ok)
        XCTAssertEqual(recorded.head.headers[.contentType], "text/event-stream")
        XCTAssertEqual(recorded.head.headers[HTTPField.Name("X-Stamped")!], "yes", "the head passes the middleware")
        let blocks = EventStreamText.blocks(text(recorded))
        XCTAssertEqual(EventStreamText.fields(text(recorded)).first?.name, "retry", text(recorded))
        XCTAssertEqual(blocks.last, "id: 1\ndata: snapshot", text(recorded))

        let before = recorded.body.count
        server.broadcast(Array("data: old\n\n".utf8), topic: 7, order: 1)      // at the follow order: not taken
        server.broadcast(Array("data: other\n\n".utf8), topic: 8, order: 2)    // a topic it does not follow
        server.broadcast(Array("data: two\n\n".utf8), topic: 7, order: 2)
        server.broadcast(Array("data: again\n\n".utf8), topic: 7, order: 2)    // the same order twice: once
        opened.stream?.send(Array("data: direct\n\n".utf8))
        XCTAssertEqual(String(decoding: recorded.body[before...], as: UTF8.self), "data: two\n\ndata: direct\n\n")

        recorded.close()
        XCTAssertTrue(recorded.isEnded)
        XCTAssertEqual(opened.closes, 1)
        XCTAssertFalse(opened.stream?.send(Array("data: late\n\n".utf8)) ?? true, "a closed stream takes nothing")
        server.broadcast(Array("data: late\n\n".utf8), topic: 7, order: 3)
        XCTAssertEqual(EventStreamText.fields(text(recorded)).filter { $0.value == "late" }.count, 0, text(recorded))
    }

    func testEndRecordsTheRetryAndClosesOnce() async throws {
        let opened = Opened()
        let server = try server(opened)
        guard case .eventStream(let recorded) = await server.router.respond(to: Request(method: .get, target: "/events")) else {
            return XCTFail("no stream")
        }
        opened.stream?.end(retryMilliseconds: 2_500)
        XCTAssertTrue(recorded.isEnded)
        XCTAssertEqual(EventStreamText.blocks(text(recorded)).last, "retry: 2500", text(recorded))
        // onClose follows on a later turn, as when a worker reports the close.
        let closed = expectation(description: "onClose")
        DispatchQueue.main.async { if opened.closes == 1 { closed.fulfill() } }
        await fulfillment(of: [closed], timeout: 5)
    }

    func testHEADGetsTheStreamHeadAndNoStream() async throws {
        let opened = Opened()
        let server = try server(opened)
        let answer = await server.router.respond(to: Request(method: .head, target: "/events"))
        XCTAssertEqual(answer.response?.status, .ok)
        XCTAssertEqual(answer.response?.headers[.contentType], "text/event-stream")
        XCTAssertNil(opened.stream)
    }
}
