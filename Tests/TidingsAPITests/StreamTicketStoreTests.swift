import XCTest
@testable import TidingsAPI

/// Stream tickets in-process, on a clock the test moves: expiry, single use, the bound on
/// outstanding tickets and the purge of expired ones (the end-to-end AccessTicketTests keep what
/// needs the real server: the routes, the 401 challenge, the 503 when full).
final class StreamTicketStoreTests: XCTestCase {
    /// A monotonic clock in nanoseconds that moves only when told to.
    private final class ManualClock {
        var nanoseconds: UInt64 = 1_000_000_000
        func advance(seconds: Double) { nanoseconds += UInt64(seconds * 1e9) }
    }

    private func makeStore(timeToLive: Double = 60, capacity: Int = 10_000) -> (StreamTicketStore, ManualClock) {
        let clock = ManualClock()
        return (StreamTicketStore(timeToLive: timeToLive, capacity: capacity, now: { clock.nanoseconds }), clock)
    }

    func testTicketIsGoodUntilItsLifetimeEnds() throws {
        let (store, clock) = makeStore(timeToLive: 60)
        let early = try XCTUnwrap(store.issue())
        let late = try XCTUnwrap(store.issue())
        clock.advance(seconds: 59.999)
        XCTAssertTrue(store.redeem(early), "still inside its 60 s")
        clock.advance(seconds: 0.001)
        XCTAssertFalse(store.redeem(late), "expired at exactly 60 s")
    }

    func testTicketIsSingleUse() throws {
        let (store, _) = makeStore()
        let ticket = try XCTUnwrap(store.issue())
        XCTAssertTrue(store.redeem(ticket))
        XCTAssertFalse(store.redeem(ticket))
        XCTAssertEqual(store.outstanding, 0)
    }

    func testExpiredTicketIsConsumedWhenPresented() throws {
        let (store, clock) = makeStore(timeToLive: 1)
        let ticket = try XCTUnwrap(store.issue())
        clock.advance(seconds: 2)
        XCTAssertFalse(store.redeem(ticket))
        XCTAssertEqual(store.outstanding, 0, "a refused expired ticket is gone, not kept for another try")
    }

    func testForgedAndMalformedTicketsAreRefusedWithoutBurningTheRealOne() throws {
        let (store, _) = makeStore()
        let ticket = try XCTUnwrap(store.issue())
        var forged = Array(ticket)
        forged[20] = forged[20] == "A" ? "B" : "A"  // same lookup prefix, other secret
        XCTAssertFalse(store.redeem(String(forged)))
        XCTAssertFalse(store.redeem(""))
        XCTAssertFalse(store.redeem("short"))
        XCTAssertFalse(store.redeem(String(ticket.dropLast()) + "!"))
        XCTAssertTrue(store.redeem(ticket))
    }

    func testOutstandingTicketsAreBoundedAndExpiredOnesPurged() throws {
        let (store, clock) = makeStore(timeToLive: 4, capacity: 3)
        for _ in 0..<3 { XCTAssertNotNil(store.issue()) }
        XCTAssertNil(store.issue(), "full: refused, not grown")
        XCTAssertEqual(store.outstanding, 3)
        clock.advance(seconds: 3.9)
        XCTAssertNil(store.issue(), "none expired yet")
        clock.advance(seconds: 0.1)
        XCTAssertNotNil(store.issue(), "the expired ones were purged")
        XCTAssertEqual(store.outstanding, 1)
    }

    func testPurgeKeepsTicketsIssuedLater() throws {
        let (store, clock) = makeStore(timeToLive: 10, capacity: 2)
        _ = try XCTUnwrap(store.issue())
        clock.advance(seconds: 5)
        let younger = try XCTUnwrap(store.issue())
        clock.advance(seconds: 5)  // the first expires, the second has 5 s left
        XCTAssertNotNil(store.issue())
        XCTAssertTrue(store.redeem(younger))
    }

    func testExpiresInRoundsUp() {
        XCTAssertEqual(StreamTicketStore(timeToLive: 60).expiresIn, 60)
        XCTAssertEqual(StreamTicketStore(timeToLive: 0.5).expiresIn, 1)
        XCTAssertEqual(StreamTicketStore().timeToLive, 60)
    }

    func testEncodingRoundTripsAndIsCanonical() throws {
        let bytes = (0..<StreamTicketStore.byteCount).map { UInt8($0 * 7 & 0xFF) }
        let text = StreamTicketStore.encode(bytes)
        XCTAssertEqual(text.count, 43)
        XCTAssertEqual(StreamTicketStore.decode(text), bytes)
        // The last character carries 2 spare bits; a non-zero spare bit is another spelling.
        var other = Array(text.utf8)
        other[42] += 1
        XCTAssertNil(StreamTicketStore.decode(String(decoding: other, as: UTF8.self)))
    }

    func testOneClientAddressHoldsAtMostItsShareAndGetsItBackAsTicketsAreUsedOrExpire() throws {
        let clock = ManualClock()
        let store = StreamTicketStore(timeToLive: 60, capacity: 1_000, perClient: 4, now: { clock.nanoseconds })
        var held: [String] = []
        for _ in 0..<4 { held.append(try store.issue(client: "10.0.0.1", credential: "reader").get()) }
        XCTAssertEqual(store.issue(client: "10.0.0.1", credential: "reader"), .failure(.client(limit: 4)))
        XCTAssertNoThrow(try store.issue(client: "10.0.0.2", credential: "reader").get(), "another address has its own share")
        XCTAssertTrue(store.redeem(held.removeFirst()))
        XCTAssertNoThrow(try store.issue(client: "10.0.0.1", credential: "reader").get(), "a used ticket frees its place")
        clock.advance(seconds: 61)
        for _ in 0..<4 { XCTAssertNoThrow(try store.issue(client: "10.0.0.1", credential: "reader").get(), "expired tickets free theirs") }
    }

    func testOneCredentialHoldsAtMostAQuarterOfTheCapacity() throws {
        let (store, _) = makeStore(capacity: 40)
        XCTAssertEqual(store.perCredential, 10)
        for index in 0..<10 { XCTAssertNoThrow(try store.issue(client: "10.0.1.\(index)", credential: "leaked").get()) }
        XCTAssertEqual(store.issue(client: "10.0.2.1", credential: "leaked"), .failure(.credential(limit: 10)))
        XCTAssertNoThrow(try store.issue(client: "10.0.2.1", credential: "other").get())
    }
}
