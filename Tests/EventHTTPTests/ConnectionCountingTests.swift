import EventHTTP
import Foundation
import TestFixtures
import XCTest

/// Connections count against the cap from accept: sockets that never send a request used to
/// be invisible until their first request, so thousands of them could exhaust descriptors.
final class ConnectionCountingTests: XCTestCase {
    func testSilentConnectionsCountFromAcceptAndFreeTheirSlotWhenClosed() throws {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configuration.maxConnections = 3
        let server = try LoopThread(configuration: configuration) { server in
            server.router.get("/ok") { _, responder in responder.send(.json(["ok": true])) }
        }
        defer { server.stop() }
        var silent = try (0..<3).map { _ in try HTTPConnection(port: server.port, timeout: 5) }
        XCTAssertTrue(server.eventually { $0.openConnectionCount == 3 }, "silent connections are not counted")
        let fourth = try HTTPConnection(port: server.port, timeout: 5)
        // Refused without having sent a byte.
        let refused = try fourth.readReply()
        XCTAssertEqual(refused.status, 503)
        XCTAssertEqual(refused.header("Content-Type"), "application/problem+json")
        XCTAssertTrue(fourth.waitForClose(timeout: 2))
        XCTAssertEqual(try silent[0].request("GET", "/ok").status, 200, "the admitted ones are served")
        silent.removeLast()
        XCTAssertTrue(server.eventually { $0.openConnectionCount == 2 })
        XCTAssertEqual(try HTTPConnection(port: server.port, timeout: 5).request("GET", "/ok").status, 200)
    }
}
