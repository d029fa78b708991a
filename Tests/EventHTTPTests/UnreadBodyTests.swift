import HTTPTypes
import EventHTTP
import Foundation
import TestFixtures
import XCTest

/// A body on a method libevent does not read a body for (HEAD, GET, DELETE, TRACE) must not be
/// parsed as the next request on the connection: the answer closes the connection instead.
final class UnreadBodyTests: XCTestCase {
    private var server: LoopThread!

    override func setUpWithError() throws {
        server = try LoopThread(configuration: ServerConfiguration(host: "127.0.0.1", port: 0)) { server in
            server.router.get("/hello") { _, responder in responder.send(.json(["hello": "world"])) }
            server.router.delete("/hello") { _, responder in responder.send(.json(["deleted": true])) }
        }
    }

    override func tearDown() { server.stop() }

    func testBodyOnBodilessMethodClosesInsteadOfDesyncing() throws {
        for method in ["HEAD", "GET", "DELETE", "TRACE"] {
            let client = try HTTPConnection(port: server.port, timeout: 5)
            // The "body" is itself a complete request: it must never be answered.
            let smuggled = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"
            client.write("\(method) /hello HTTP/1.1\r\nHost: t\r\nContent-Length: \(smuggled.utf8.count)\r\n\r\n\(smuggled)")
            let reply = try XCTUnwrap(try? client.readReply(head: method == "HEAD"), method)
            XCTAssertNotEqual(reply.status, 501, method)
            XCTAssertEqual(reply.header("Connection")?.lowercased(), "close", method)
            XCTAssertNil(try? client.readReply(), "\(method): the body was answered as a second request")
        }
    }

    func testOrdinaryKeepAliveIsUntouched() throws {
        let client = try HTTPConnection(port: server.port, timeout: 5)
        for _ in 0..<3 {
            let reply = try client.request("GET", "/hello")
            XCTAssertEqual(reply.status, 200)
            XCTAssertNil(reply.header("Connection"))
        }
        let empty = try client.request("DELETE", "/hello", headers: ["Content-Length": "0"])
        XCTAssertEqual(empty.status, 200)
        XCTAssertEqual(try client.request("GET", "/hello").status, 200)
    }
}
