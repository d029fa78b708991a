import Foundation
import TestFixtures
import XCTest

/// deploy/nginx.conf, run for real by ``NginxBalancer`` in front of two upstreams.
final class NginxBalancerTests: XCTestCase {
    private func start() throws -> (Upstream, Upstream, NginxBalancer) {
        let a = try Upstream(name: "A")
        addTeardownBlock { a.stop() }
        let b = try Upstream(name: "B")
        addTeardownBlock { b.stop() }
        let balancer = try NginxBalancer(upstreamPorts: [a.port, b.port])
        addTeardownBlock { balancer.stop() }
        return (a, b, balancer)
    }

    private func whoami(_ balancer: NginxBalancer) throws -> String {
        let reply = try exchange(port: balancer.port, "GET /whoami HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", timeout: 5) { _ in false }
        return String(reply.split(separator: "\r\n\r\n", maxSplits: 1).last ?? "")
    }

    func testRequestsAreSpreadOverBothInstancesAndSkipADeadOne() throws {
        let (a, _, balancer) = try start()
        let answers = try (0..<6).map { _ in try whoami(balancer) }
        XCTAssertEqual(Set(answers), ["A", "B"], "\(answers)")

        a.stop()
        let afterStop = try (0..<6).map { _ in try whoami(balancer) }
        XCTAssertEqual(afterStop, Array(repeating: "B", count: 6), "\(afterStop)\n\(balancer.errorLog)")
    }

    func testEventStreamsAreNotBuffered() throws {
        let (_, _, balancer) = try start()
        for path in ["/events", "/preferences/events?keys=a", "/preferences/theme/events", "/ofrep/v1/events"] {
            let started = Date()
            let reply = try exchange(port: balancer.port, "GET \(path) HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\r\n", timeout: 2.5) {
                $0.contains("data: first from")
            }
            let raw = try XCTUnwrap(HTTPReply.parse(raw: reply), reply)
            XCTAssertEqual(raw.version, "HTTP/1.1", reply)
            XCTAssertEqual(raw.reply.status, 200, reply)
            // Only the first event, whole: the upstream sends its second after 3 s, and the first must not wait for it.
            XCTAssertTrue(["data: first from A\n\n", "data: first from B\n\n"].contains(String(decoding: raw.payload, as: UTF8.self)),
                          "\(path): \(reply)")
            XCTAssertLessThan(Date().timeIntervalSince(started), 2.5, path)
        }
    }

    func testNoInstanceAnswersWithProblemDetails() throws {
        let (a, b, balancer) = try start()
        a.stop()
        b.stop()
        let reply = try exchange(port: balancer.port, "GET /whoami HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", timeout: 10) { _ in false }
        let raw = try XCTUnwrap(HTTPReply.parse(raw: reply), reply)
        XCTAssertEqual(raw.reply.status, 503, reply)
        XCTAssertEqual(raw.reply.mediaType()?.type, "application/problem+json", reply)
        XCTAssertEqual(raw.reply.header("Retry-After"), "1", reply)
        XCTAssertEqual(JSONValue.parse(raw.payload)?["status"], 503, reply)
    }

    func testStopRemovesEverything() throws {
        let (_, _, balancer) = try start()
        XCTAssertTrue(FileManager.default.fileExists(atPath: balancer.prefix.path))
        balancer.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: balancer.prefix.path))
        XCTAssertFalse(FixtureProcess.isAccepting(port: balancer.port))
        balancer.stop()  // twice is fine
    }
}
