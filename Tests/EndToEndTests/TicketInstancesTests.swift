import Crypto
import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Stream tickets across instances (API.md "Access", "Several instances"): the real binary,
/// two instances on one SQLite data directory and two on one PostgreSQL, as `deploy/` runs them
/// behind a round-robin balancer. A ticket issued by A opens a stream on B; it is then used up on
/// both; an expired or forged ticket fails — one minted the way version 1 did, from the
/// credential's digest alone, included; two instances redeeming one ticket at the same moment
/// open exactly one stream; both sign with the one secret their store keeps. The ticket's rules one by one: `TidingsAPITests.StreamTicketStoreTests`.
final class TicketInstancesTests: XCTestCase {
    private static let readToken = "ticket-read-secret-1"
    private static let reader = ["Authorization": "Bearer \(readToken)"]
    private let arguments = ["--api-token", "ticket-api-secret-1", "--read-token", TicketInstancesTests.readToken]

    func test_two_instances_on_SQLite() throws {
        let directory = try TemporaryDirectory()
        let data = directory.url.appendingPathComponent("data")
        let a = try TidingsProcess(arguments: arguments, dataDirectory: data)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments, dataDirectory: data)
        defer { b.stop() }
        let file = data.appendingPathComponent("tidings.sqlite").path
        try scenario(a, b) {
            try FixtureProcess.run("/usr/bin/env", ["python3", "-c", """
                import sqlite3, sys
                print(sqlite3.connect(sys.argv[1]).execute("SELECT value FROM server_secret WHERE name = 'stream-tickets'").fetchone()[0])
                """, file])
        }
    }

    func test_two_instances_on_PostgreSQL() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let a = try TidingsProcess(arguments: arguments + ["--database-url", cluster.url])
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments + ["--database-url", cluster.url])
        defer { b.stop() }
        try scenario(a, b) { try cluster.psql("SELECT value FROM server_secret WHERE name = 'stream-tickets'") }

        // The store cannot be asked whether a ticket was used: 503 with Retry-After, no stream.
        try cluster.stop(immediate: true)
        // (Issuing needs no store; only the stream's claim does.)
        let unchecked = try b.openEventStream("/events?ticket=\(try issue(on: a))").reply
        XCTAssertEqual(unchecked.status, 503, unchecked.text)
        XCTAssertNotNil(unchecked.header("Retry-After"))
        XCTAssertEqual(unchecked.header("Content-Type"), "application/problem+json")
    }

    // MARK: The scenario

    /// `storedSecret`: the stream ticket secret as the instances' store holds it (hex).
    private func scenario(_ a: TidingsProcess, _ b: TidingsProcess, storedSecret: () throws -> String) throws {
        // Issued by A, opens a stream on B; then used up on both.
        let ticket = try issue(on: a)
        let stream = try b.openEventStream("/events?topics=preferences&ticket=\(ticket)")
        XCTAssertEqual(stream.reply.status, 200, stream.reply.text)
        for (name, instance) in [("B", b), ("A", a)] {
            let again = try instance.get("/events?ticket=\(ticket)")
            XCTAssertEqual(again.status, 401, "a used ticket on \(name): \(again.text)")
            XCTAssertEqual(again.challenge()?.parameters["error"], "invalid_token")
        }

        // Forged: one character changed; a ticket signed with a key nobody has.
        var forged = Array(try issue(on: a))
        forged[40] = forged[40] == "A" ? "B" : "A"
        XCTAssertEqual(try b.get("/events?ticket=\(String(forged))").status, 401)
        let now = UInt64(Date().timeIntervalSince1970)
        let secret = try XCTUnwrap(Self.bytes(hex: try storedSecret().trimmingCharacters(in: .whitespacesAndNewlines)))
        XCTAssertEqual(secret.count, 32)
        XCTAssertEqual(try b.get("/events?ticket=\(Self.sign(expires: now + 30, secret: secret, token: "not-the-read-token"))").status, 401)
        // What anyone who knows the credential's digest (a `--tokens` file) could mint: refused,
        // both as version 1 made it and in today's format keyed by what version 1 derived.
        for (version, mintedFromDigest) in [(1, Self.signFromDigest(expires: now + 30, token: Self.readToken, version: 1)),
                                            (2, Self.signFromDigest(expires: now + 30, token: Self.readToken, version: 2))] {
            let refused = try b.get("/events?ticket=\(mintedFromDigest)")
            XCTAssertEqual(refused.status, 401, "version \(version), keyed by the digest: \(refused.text)")
        }
        // Expired: signed like the server signs (API.md's format), with the store's secret, 1 s ago.
        // The same, unexpired, opens a stream: only the expiry differs.
        XCTAssertEqual(try b.get("/events?ticket=\(Self.sign(expires: now - 1, secret: secret, token: Self.readToken))").status, 401)
        let selfSigned = try a.openEventStream("/events?ticket=\(Self.sign(expires: now + 30, secret: secret, token: Self.readToken))")
        XCTAssertEqual(selfSigned.reply.status, 200, "the test's signing is the server's: \(selfSigned.reply.text)")

        // Redeemed on A and B at the same moment: exactly one stream opens, the other is 401.
        for _ in 0..<3 {
            let contested = try issue(on: a)
            let statuses = try redeemAtOnce(contested, on: [a, b])
            XCTAssertEqual(statuses.sorted(), [200, 401], "one ticket, two instances at once")
        }
    }

    private func issue(on instance: TidingsProcess) throws -> String {
        let reply = try instance.request("POST", "/stream-tickets", headers: Self.reader)
        XCTAssertEqual(reply.status, 201, reply.text)
        return try XCTUnwrap(reply.value?["ticket"]?.stringValue)
    }

    /// Opens `ticket`'s stream on every instance at once; the statuses, in `instances`' order.
    private func redeemAtOnce(_ ticket: String, on instances: [TidingsProcess]) throws -> [Int] {
        // Connections made first, so the two requests leave as close together as threads allow.
        let race = Race(connections: try instances.map { try $0.connect() })
        DispatchQueue.concurrentPerform(iterations: instances.count) { index in race.open(index, "/events?ticket=\(ticket)") }
        return race.statuses
    }

    /// A ticket as the server signs one (`StreamTicket`): version 2, expiry, 16 random bytes, the
    /// first 8 bytes of SHA-256 of the credential's name (`read` for `--read-token`), and
    /// HMAC-SHA256 keyed by the store's secret over all that and the token's SHA-256.
    private static func sign(expires: UInt64, secret: [UInt8], token: String) -> String {
        let message = fields(version: 2, expires: expires)
        let binding = Array(Crypto.SHA256.hash(data: Array(token.utf8)))
        return base64URL(message + Array(HMAC<Crypto.SHA256>.authenticationCode(for: message + binding, using: SymmetricKey(data: secret))))
    }

    /// A ticket minted from the credential's digest alone, as version 1 keyed them: HMAC-SHA256
    /// under `HMAC(SHA-256(token), "tidings stream ticket key v1")`.
    private static func signFromDigest(expires: UInt64, token: String, version: UInt8) -> String {
        let key = HMAC<Crypto.SHA256>.authenticationCode(for: Array("tidings stream ticket key v1".utf8),
                                                         using: SymmetricKey(data: Array(Crypto.SHA256.hash(data: Array(token.utf8)))))
        let message = fields(version: version, expires: expires)
        return base64URL(message + Array(HMAC<Crypto.SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(key)))))
    }

    private static func fields(version: UInt8, expires: UInt64) -> [UInt8] {
        var message: [UInt8] = [version]
        message += (0..<8).map { UInt8(truncatingIfNeeded: expires >> (56 - 8 * $0)) }
        message += (0..<16).map { _ in UInt8.random(in: 0...255) }
        message += Array(Crypto.SHA256.hash(data: Array("read".utf8))).prefix(8)
        return message
    }

    private static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func bytes(hex: String) -> [UInt8]? {
        let characters = Array(hex)
        guard characters.count % 2 == 0 else { return nil }
        return try? stride(from: 0, to: characters.count, by: 2).map { index in
            guard let byte = UInt8(String(characters[index...index + 1]), radix: 16) else { throw CocoaError(.formatting) }
            return byte
        }
    }
}

/// Streams opened by concurrent threads, one connection each; each thread touches only its own
/// connection, the results are read after all joined.
private final class Race: @unchecked Sendable {
    private let lock = NSLock()
    private let connections: [HTTPConnection]
    private var readers: [EventStreamReader?]
    private var results: [Int]

    init(connections: [HTTPConnection]) {
        self.connections = connections
        readers = Array(repeating: nil, count: connections.count)
        results = Array(repeating: -1, count: connections.count)
    }

    func open(_ index: Int, _ target: String) {
        let reader = try? connections[index].openEventStream(target)
        lock.withLock {
            readers[index] = reader  // kept open until the race is over
            results[index] = Int(reader?.reply.status ?? -1)
        }
    }

    var statuses: [Int] { lock.withLock { results } }
}
