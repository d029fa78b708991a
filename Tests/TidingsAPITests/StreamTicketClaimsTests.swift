import EventHTTP
import HTTPTypes
import Synchronization
import XCTest
@testable import TidingsAPI

/// The claim of a ticket's nonce in the shared store, on a lease-taker the test plays: the name
/// and duration asked for, an already-taken nonce, and a store that cannot be asked (the stream
/// route then answers 503; end to end: `EndToEndTests.TicketInstancesTests`).
@MainActor
final class StreamTicketClaimsTests: XCTestCase {
    private let claim = StreamTicket.Claim(nonce: StreamTicket.Nonce(high: 0x0102_0304_0506_0708, low: 0x090A_0B0C_0D0E_0F10),
                                           expires: 1_800_000_060)

    private func outcome(_ claims: StreamTicketClaims) async -> StreamTicketClaims.Outcome {
        await withCheckedContinuation { continuation in
            claims.claim(claim) { continuation.resume(returning: $0) }
        }
    }

    func testClaimIsALeaseOnTheNonceUntilTheTicketExpiresAndOnlyTheFirstHolderGetsIt() async {
        let asked = Mutex<[(name: String, holder: String, duration: Duration)]>([])
        let claims = StreamTicketClaims(now: { 1_800_000_000 })
        claims.takeLease = { name, holder, duration in
            asked.withLock { asked in
                asked.append((name, holder, duration))
                return asked.filter { $0.name == name }.count == 1  // the first holder keeps it
            }
        }
        let first = await outcome(claims)
        XCTAssertEqual(first, .claimed)
        let second = await outcome(claims)
        XCTAssertEqual(second, .alreadyUsed)
        let calls = asked.withLock { $0 }
        XCTAssertEqual(calls.map(\.name), ["ticket:0102030405060708090a0b0c0d0e0f10", "ticket:0102030405060708090a0b0c0d0e0f10"])
        XCTAssertNotEqual(calls[0].holder, calls[1].holder, "each redemption claims under its own holder")
        XCTAssertEqual(calls[0].duration, .seconds(60 + StreamTicketClaims.margin), "until expiry, plus the clocks' margin")
    }

    func testStoreThatCannotBeAskedIsUnavailableNeverClaimed() async {
        struct Unreachable: Error {}
        let claims = StreamTicketClaims(now: { 1_800_000_000 })
        claims.takeLease = { _, _, _ in throw Unreachable() }
        let result = await outcome(claims)
        XCTAssertEqual(result, .unavailable)
        let answer = StreamTicketClaims.unavailable()
        XCTAssertEqual(answer.status, .serviceUnavailable)
        XCTAssertEqual(answer.headers[.retryAfter], "1")
        XCTAssertEqual(answer.headers[.contentType], "application/problem+json")
    }
}
