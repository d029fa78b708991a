import HTTPTypes
@testable import EventHTTP
import Foundation
import TestFixtures
import XCTest

/// Trusted proxies, per-client shares, the stream budget, jittered `retry:` and padding
/// (API.md "Behind a proxy, and at capacity"), on a real server over loopback.
final class ProxyAndCapacityTests: XCTestCase {
    // MARK: Who the client is

    func testClientIsTheRightMostUntrustedForwardedAddress() throws {
        let proxies = try TrustedProxies(["127.0.0.1", "10.0.0.0/8", "fd00::/8"])
        func client(_ peer: String, _ fields: [(String, String)]) -> String {
            var headers = HTTPFields()
            for (name, value) in fields { headers.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
            return proxies.client(peer: peer, headers: headers)
        }
        // From an untrusted peer the fields are ignored: no spoofing around a limit.
        XCTAssertEqual(client("192.0.2.9", [("X-Forwarded-For", "1.1.1.1")]), "192.0.2.9")
        XCTAssertEqual(client("192.0.2.9", [("Forwarded", "for=1.1.1.1")]), "192.0.2.9")
        // From a trusted one: the right-most address that is not a trusted proxy.
        XCTAssertEqual(client("127.0.0.1", [("X-Forwarded-For", "6.6.6.6, 198.51.100.7")]), "198.51.100.7")
        XCTAssertEqual(client("127.0.0.1", [("X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.1.2.3")]), "198.51.100.7",
                       "a second trusted hop is skipped")
        XCTAssertEqual(client("127.0.0.1", [("X-Forwarded-For", "6.6.6.6"), ("X-Forwarded-For", "198.51.100.8")]), "198.51.100.8",
                       "several fields are one list")
        XCTAssertEqual(client("127.0.0.1", [("X-Forwarded-For", "10.0.0.1, 10.0.0.2")]), "10.0.0.1",
                       "all trusted: the left-most")
        XCTAssertEqual(client("127.0.0.1", []), "127.0.0.1", "no field: the proxy's own request")
        XCTAssertEqual(client("127.0.0.1", [("X-Forwarded-For", "1.1.1.1, unknown")]), "unknown",
                       "an entry that is not an address ends the walk; nothing left of it is believed")
        XCTAssertEqual(client("127.0.0.1", [("X-Forwarded-For", "::ffff:198.51.100.9")]), "198.51.100.9")
        XCTAssertEqual(client("127.0.0.1", [("Forwarded", #"for=6.6.6.6, for="[2001:db8::17]:4711";proto=http"#)]), "2001:db8::17")
        XCTAssertEqual(client("127.0.0.1", [("Forwarded", "for=198.51.100.3:8080;by=10.0.0.1")]), "198.51.100.3")
        XCTAssertEqual(client("127.0.0.1", [("X-Forwarded-For", "198.51.100.4"), ("Forwarded", "for=6.6.6.6")]), "198.51.100.4",
                       "X-Forwarded-For wins over Forwarded")
        XCTAssertEqual(client("fd00::1", [("X-Forwarded-For", "2001:db8::5")]), "2001:db8::5")
        XCTAssertThrowsError(try TrustedProxies(["10.0.0.0/33"]))
        XCTAssertThrowsError(try TrustedProxies(["nginx"]))
        XCTAssertThrowsError(try TrustedProxies(["::1/129"]))
        XCTAssertTrue(try TrustedProxies(["0.0.0.0/0"]).contains("203.0.113.1"))
        XCTAssertFalse(try TrustedProxies(["10.0.0.0/8"]).contains("11.0.0.1"))
    }

    // MARK: Per-client shares behind a proxy

    private func streamServer(_ configure: (inout ServerConfiguration) -> Void) throws -> LoopThread {
        var configuration = ServerConfiguration(host: "127.0.0.1", port: 0)
        configure(&configuration)
        return try LoopThread(configuration: configuration) { server in
            server.router.get("/stream") { _, responder in
                guard let stream = responder.startEventStream() else { return }
                StreamBook.shared(server).add(stream)
            }
            server.router.get("/whoami") { request, responder in
                responder.send(.json(["client": request.clientAddress ?? "none"]))
            }
        }
    }

    /// Opens a stream; the retry value when it was refused (200, `retry:`, end), nil when open.
    private func openStream(_ port: Int, forwardedFor: String? = nil) throws -> (client: HTTPConnection, refusedRetry: Int?) {
        let client = try HTTPConnection(port: port, timeout: 5)
        var head = "GET /stream HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n"
        if let forwardedFor { head += "X-Forwarded-For: \(forwardedFor)\r\n" }
        client.write(head + "\r\n")
        let reply = try XCTUnwrap(try? client.readReply(head: true), "no answer")
        XCTAssertEqual(reply.status, 200)
        XCTAssertEqual(reply.header("Content-Type"), "text/event-stream")
        XCTAssertEqual(reply.header("Cache-Control"), "no-cache, no-transform")
        if reply.header("Connection") == "close", reply.header("Content-Length") != nil {
            let body = client.readUntil("\n\n") ?? ""
            return (client, Int(body.replacingOccurrences(of: "retry: ", with: "").trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        XCTAssertNotNil(client.readUntil("retry: "), "an open stream starts with its retry")
        return (client, nil)
    }

    func testBehindATrustedProxyTheShareIsTheForwardedClients() throws {
        let server = try streamServer {
            $0.maxConnectionsPerClient = 2
            $0.trustedProxies = try! TrustedProxies(["127.0.0.1"])
        }
        defer { server.stop() }
        // The proxy's own connections are capped only by the total: five at once is fine.
        var held: [HTTPConnection] = []
        for _ in 0..<5 {
            let client = try HTTPConnection(port: server.port, timeout: 5)
            let reply = try client.request("GET", "/whoami", headers: ["X-Forwarded-For": "198.51.100.1, 127.0.0.1"])
            XCTAssertEqual(reply.status, 200)
            XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: String], ["client": "198.51.100.1"])
            held.append(client)
        }
        // Client A: two streams, the third refused with 200 + retry + end.
        for _ in 0..<2 { held.append(try XCTUnwrap(openStream(server.port, forwardedFor: "198.51.100.1").client)) }
        let third = try openStream(server.port, forwardedFor: "198.51.100.1")
        XCTAssertNotNil(third.refusedRetry, "A's third stream is over A's share")
        XCTAssertTrue(third.client.waitForClose(timeout: 3))
        // Client B behind the same proxy is not refused because of A.
        let other = try openStream(server.port, forwardedFor: "198.51.100.2")
        XCTAssertNil(other.refusedRetry, "B has a share of its own")
        held.append(other.client)
        XCTAssertEqual(server.sync { $0.openStreamCount }, 3)
        XCTAssertEqual(server.sync { $0.streamsShed }, 1)
        withExtendedLifetime(held) {}
    }

    func testForwardedForFromAnUntrustedPeerChangesNothing() throws {
        let server = try streamServer { $0.maxConnectionsPerClient = 2 }
        defer { server.stop() }
        let whoami = try HTTPConnection(port: server.port, timeout: 5).request("GET", "/whoami", headers: ["X-Forwarded-For": "6.6.6.6"])
        XCTAssertEqual(try JSONSerialization.jsonObject(with: Data(whoami.body)) as? [String: String], ["client": "127.0.0.1"])
        var held: [HTTPConnection] = []
        for spoof in ["1.0.0.1", "1.0.0.2"] { held.append(try openStream(server.port, forwardedFor: spoof).client) }
        // A third connection from the same address, whatever it claims, is over the share: as
        // a stream it gets 200 + retry + end, as anything else 503.
        let third = try openStream(server.port, forwardedFor: "1.0.0.3")
        XCTAssertNotNil(third.refusedRetry)
        let plain = try HTTPConnection(port: server.port, timeout: 5).request("GET", "/whoami", headers: ["X-Forwarded-For": "1.0.0.4"])
        XCTAssertEqual(plain.status, 503)
        XCTAssertEqual(plain.header("Connection"), "close")
        withExtendedLifetime(held) {}
    }

    // MARK: The stream budget

    func testAFullServerShedsStreamsAndAnswersEverythingElse() throws {
        let server = try streamServer { $0.maxStreams = 3 }
        defer { server.stop() }
        XCTAssertEqual(server.sync { $0.streamLimit }, 3)
        var held: [HTTPConnection] = []
        for _ in 0..<3 {
            let opened = try openStream(server.port)
            XCTAssertNil(opened.refusedRetry)
            held.append(opened.client)
        }
        for _ in 0..<4 {
            let refused = try openStream(server.port)
            let retry = try XCTUnwrap(refused.refusedRetry, "over --max-streams: 200, retry:, end")
            XCTAssertTrue((1_500...4_500).contains(retry), "\(retry)")
        }
        for _ in 0..<20 {
            let reply = try HTTPConnection(port: server.port, timeout: 5).request("GET", "/whoami")
            XCTAssertEqual(reply.status, 200, "plain requests are answered with the server full of streams")
        }
        XCTAssertEqual(server.sync { $0.streamsShed }, 4)
        withExtendedLifetime(held) {}
    }

    func testDefaultStreamBudgetIsTheDescriptorLimitLessTenPercent() {
        let defaults = ServerConfiguration()
        XCTAssertEqual(HTTPServer.limits(defaults, descriptors: 20_000).streams, 18_000)
        XCTAssertEqual(HTTPServer.limits(defaults, descriptors: 20_000).connections, 19_936)
        XCTAssertEqual(HTTPServer.limits(defaults, descriptors: 1_024).streams, 896, "never the reserved connections")
        XCTAssertEqual(HTTPServer.limits(defaults, descriptors: 524_288).streams, 471_860)
        var configured = defaults
        configured.maxStreams = 500
        XCTAssertEqual(HTTPServer.limits(configured, descriptors: 20_000).streams, 500)
        configured.maxStreams = 50_000
        XCTAssertEqual(HTTPServer.limits(configured, descriptors: 20_000).streams, 19_872, "capped below the connections")
    }

    // MARK: Jitter and padding

    func testRetryOfAThousandStreamsSpreadsOverTheBaseAndHalf() throws {
        let server = try streamServer { $0.maxConnectionsPerClient = 2_000 }
        defer { server.stop() }
        var retries: [Int] = []
        var held: [HTTPConnection] = []
        for _ in 0..<1_000 {
            let client = try HTTPConnection(port: server.port, timeout: 5)
            client.write("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
            // The head ends in CR LF CR LF; the first blank line after it ends the `retry:` event.
            let text = try XCTUnwrap(client.readUntil("\n\n", timeout: 5))
            let payload = try XCTUnwrap(HTTPReply.parse(raw: text), text).payload
            let value = try XCTUnwrap(EventStreamText.fields(String(decoding: payload, as: UTF8.self)).first { $0.name == "retry" }
                .flatMap { Int($0.value) }, text)
            retries.append(value)
            held.append(client)
        }
        XCTAssertTrue(retries.allSatisfy { (1_500...4_500).contains($0) }, "\(retries.min()!)...\(retries.max()!)")
        // Spread, not a few values: every 300 ms bucket of the range is used, none by more than a fifth.
        var buckets = [Int](repeating: 0, count: 10)
        for value in retries { buckets[min(9, (value - 1_500) / 300)] += 1 }
        XCTAssertTrue(buckets.allSatisfy { $0 > 0 && $0 < 200 }, "\(buckets)")
        // Shutdown ends each stream with a retry of its own, spread the same way.
        let ended = server.sync { server -> Int in
            server.beginShutdown {}
            return server.openStreamCount
        }
        XCTAssertEqual(ended, 1_000)
        var finals: Set<Int> = []
        for client in held.prefix(100) {
            let tail = try XCTUnwrap(client.readUntil("retry: ", timeout: 5).flatMap { _ in client.readUntil("\n\n") })
            finals.insert(try XCTUnwrap(Int(tail.trimmingCharacters(in: .whitespacesAndNewlines)), tail))
        }
        XCTAssertTrue(finals.allSatisfy { (1_500...4_500).contains($0) })
        XCTAssertGreaterThan(finals.count, 50, "the final retry is jittered per stream")
    }

    func testPaddingCommentComesFirst() throws {
        let server = try streamServer { $0.streamPadding = 2_048 }
        defer { server.stop() }
        let client = try HTTPConnection(port: server.port, timeout: 5)
        client.write("GET /stream HTTP/1.0\r\n\r\n")   // close-delimited: no chunk sizes between
        let text = try XCTUnwrap(client.readUntil("retry: "))
        let body = try XCTUnwrap(HTTPReply.parse(raw: text), text).reply.text
        let padding = body.dropLast("retry: ".count)
        XCTAssertEqual(padding.utf8.count, 2_048)
        XCTAssertEqual(padding.first, ":", "a comment line")
        XCTAssertEqual(padding.last, "\n")
        XCTAssertEqual(ServerSentEvent.padding(bytes: 1).count, 2)
        XCTAssertEqual(ServerSentEvent.padding(bytes: 1 << 20).count, ServerSentEvent.maxPadding)
    }
}
