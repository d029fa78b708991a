import Crypto
import XCTest
@testable import TidingsAPI

/// Stream tickets in-process, on a clock the test moves: the signature any instance with the
/// same credentials verifies, expiry, the local used-set, revocation by removing a credential,
/// the bound on outstanding tickets and the purge of expired ones (the end-to-end AccessTicketTests
/// and TicketInstancesTests keep what needs real servers: the routes, the 401 challenge, the 503
/// when full, single use across instances).
final class StreamTicketStoreTests: XCTestCase {
    /// A wall clock in seconds that moves only when told to.
    private final class ManualClock {
        var seconds: Double = 1_800_000_000
        func advance(seconds: Double) { self.seconds += seconds }
    }

    private let reader = NamedCredential(name: "reader", role: .read, secret: .token(Array("read-secret".utf8)))
    private let other = NamedCredential(name: "other", role: .read, secret: .token(Array("other-secret".utf8)))

    /// The store's stream ticket secret, shared by every instance these tests make.
    private let secret = StreamTicketStore.randomSecret()

    private func makeStore(timeToLive: Double = 60, capacity: Int = 10_000, perCredential: Int? = nil,
                           clock: ManualClock = ManualClock(), secret: [UInt8]? = nil) -> (StreamTicketStore, ManualClock) {
        let store = StreamTicketStore(timeToLive: timeToLive, capacity: capacity, perCredential: perCredential, now: { clock.seconds })
        store.secret = secret ?? self.secret
        return (store, clock)
    }

    private func issue(_ store: StreamTicketStore, _ credential: NamedCredential? = nil, client: String? = nil) throws -> String {
        try store.issue(for: credential ?? reader, client: client).get()
    }

    private func redeems(_ store: StreamTicketStore, _ ticket: String, readers: [NamedCredential]? = nil,
                         environment: String? = nil) -> Bool {
        if case .valid = store.redeem(ticket, readers: readers ?? [reader, other], environment: environment) { return true }
        return false
    }

    func testTicketIsGoodUntilItsLifetimeEnds() throws {
        let (store, clock) = makeStore(timeToLive: 60)
        let early = try issue(store)
        let late = try issue(store)
        clock.advance(seconds: 59.5)
        XCTAssertTrue(redeems(store, early), "still inside its 60 s")
        clock.advance(seconds: 0.5)
        XCTAssertFalse(redeems(store, late), "expired at exactly 60 s")
    }

    func testAnotherInstanceWithTheSameCredentialsAcceptsItAndEachUsesItOnce() throws {
        let clock = ManualClock()
        let (issuer, _) = makeStore(clock: clock)
        let (redeemer, _) = makeStore(clock: clock)
        let ticket = try issue(issuer)
        guard case let .valid(claim) = redeemer.redeem(ticket, readers: [other, reader], environment: nil) else {
            return XCTFail("another instance's ticket was refused")
        }
        XCTAssertEqual(claim.expires, UInt64(clock.seconds + 60))
        XCTAssertFalse(redeems(redeemer, ticket), "used here: the local used-set refuses it again")
        XCTAssertTrue(redeems(issuer, ticket), "the issuer's own used-set has not seen it: the shared store's claim decides")
    }

    func testOnlyAnInstanceWithTheSameStoreSecretAcceptsIt() throws {
        let clock = ManualClock()
        let (issuer, _) = makeStore(clock: clock)
        let (elsewhere, _) = makeStore(clock: clock, secret: StreamTicketStore.randomSecret())
        let (unset, _) = makeStore(clock: clock)
        unset.secret = StreamTicketStore().secret
        let ticket = try issue(issuer)
        XCTAssertFalse(redeems(elsewhere, ticket), "another store's secret")
        XCTAssertFalse(redeems(unset, ticket), "an instance whose secret was never set from the store")
        XCTAssertNotEqual(StreamTicketStore().secret, StreamTicketStore().secret, "an unset secret is random, never a known value")
        XCTAssertTrue(redeems(issuer, ticket), "the refusals elsewhere did not use it")
    }

    /// Anyone who reads a `--tokens` file learns a credential's digest. Version 1 keyed the MAC
    /// with `HMAC(digest, "tidings stream ticket key v1")`, so such a reader could mint tickets;
    /// none minted from the digest alone — in the old format or today's — is accepted.
    func testATicketMintedFromTheCredentialsDigestIsRefused() throws {
        let digest = TidingsAPI.SHA256.hash(Array("read-secret".utf8))
        let fromFile = NamedCredential(name: "reader", role: .read, secret: .sha256(digest))
        let (store, clock) = makeStore()
        let oldKey = Array(HMAC<Crypto.SHA256>.authenticationCode(for: Array("tidings stream ticket key v1".utf8),
                                                                  using: SymmetricKey(data: digest)))
        func minted(version: UInt8, key: [UInt8], binding: [UInt8]) -> String {
            var message: [UInt8] = [version] + StreamTicket.Nonce.bigEndian(UInt64(clock.seconds + 30))
            message += StreamTicket.Nonce.random().bytes + StreamTicket.issuerTag("reader")
            let tag = HMAC<Crypto.SHA256>.authenticationCode(for: message + binding, using: SymmetricKey(data: key))
            return Base64URL.encode(message + Array(tag))
        }
        for (name, ticket) in [("version 1, the old key", minted(version: 1, key: oldKey, binding: [])),
                               ("version 2, the old key", minted(version: 2, key: oldKey, binding: [])),
                               ("version 2, the old key over the digest", minted(version: 2, key: oldKey, binding: digest)),
                               ("version 2, keyed by the digest", minted(version: 2, key: digest, binding: digest))] {
            XCTAssertEqual(store.redeem(ticket, readers: [fromFile], environment: nil), .invalid, name)
        }
        XCTAssertTrue(redeems(store, minted(version: 2, key: secret, binding: digest), readers: [fromFile]),
                      "with the store's secret the same fields are a ticket: only the key was wrong")
        XCTAssertTrue(redeems(store, try issue(store), readers: [fromFile]))
    }

    func testTicketIsSingleUseAndFreesItsShare() throws {
        let (store, _) = makeStore()
        let ticket = try issue(store)
        XCTAssertEqual(store.outstanding, 1)
        XCTAssertTrue(redeems(store, ticket))
        XCTAssertFalse(redeems(store, ticket))
        XCTAssertEqual(store.outstanding, 0)
    }

    func testRemovedOrRekeyedCredentialRevokesItsTickets() throws {
        let (store, _) = makeStore()
        let ticket = try issue(store)
        XCTAssertFalse(redeems(store, ticket, readers: [other]), "its credential is gone")
        let rekeyed = NamedCredential(name: "reader", role: .read, secret: .token(Array("new-secret".utf8)))
        XCTAssertFalse(redeems(store, ticket, readers: [rekeyed]), "same name, another token")
        XCTAssertTrue(redeems(store, ticket, readers: [rekeyed, reader]), "refusals did not use it")
    }

    func testDigestCredentialSignsLikeItsToken() throws {
        let (store, _) = makeStore()
        let digest = NamedCredential(name: "reader", role: .read, secret: .sha256(TidingsAPI.SHA256.hash(Array("read-secret".utf8))))
        XCTAssertTrue(redeems(store, try issue(store), readers: [digest]), "a --tokens entry by digest binds the same credential")
    }

    func testScopeComesFromTheCurrentCredential() throws {
        let (store, _) = makeStore()
        var scoped = reader
        scoped.environments = ["staging"]
        let ticket = try issue(store)
        XCTAssertEqual(store.redeem(ticket, readers: [scoped], environment: "dev"), .outOfScope)
        let good = try issue(store)
        let nonce = try XCTUnwrap(StreamTicket.parse(good)).ticket.nonce
        XCTAssertEqual(store.redeem(good, readers: [scoped], environment: "staging"),
                       .valid(StreamTicket.Claim(nonce: nonce, expires: 1_800_000_060)))
    }

    func testForgedAndMalformedTicketsAreRefusedWithoutBurningTheRealOne() throws {
        let (store, _) = makeStore()
        let ticket = try issue(store)
        for index in [1, 20, 40, 86] {  // version/expiry, nonce, issuer, tag
            var forged = Array(ticket)
            forged[index] = forged[index] == "A" ? "B" : "A"
            XCTAssertEqual(store.redeem(String(forged), readers: [reader], environment: nil), .invalid, "changed at \(index)")
        }
        // Signed with a key nobody here has (the credential's name, another token).
        let stranger = NamedCredential(name: "reader", role: .read, secret: .token(Array("guess".utf8)))
        XCTAssertFalse(redeems(store, try issue(store, stranger)))
        XCTAssertFalse(redeems(store, ""))
        XCTAssertFalse(redeems(store, "short"))
        XCTAssertFalse(redeems(store, String(ticket.dropLast()) + "!"))
        XCTAssertFalse(redeems(store, ticket + "A"))
        XCTAssertFalse(redeems(store, StreamTicketStore.unrecordedTicket()))
        XCTAssertTrue(redeems(store, ticket))
    }

    func testTicketSignedForLongerThanTheLifetimeIsRefused() throws {
        let clock = ManualClock()
        let (longLived, _) = makeStore(timeToLive: 3_600, clock: clock)
        let (store, _) = makeStore(timeToLive: 60, clock: clock)
        XCTAssertFalse(redeems(store, try issue(longLived)), "an expiry past now + lifetime + skew is not one this cluster signs")
    }

    func testOutstandingTicketsAreBoundedAndExpiredOnesPurged() throws {
        let (store, clock) = makeStore(timeToLive: 4, capacity: 3, perCredential: 4)  // the capacity binds first
        for _ in 0..<3 { XCTAssertNoThrow(try issue(store)) }
        XCTAssertEqual(store.issue(for: reader, client: nil), .failure(.full), "full: refused, not grown")
        XCTAssertEqual(store.outstanding, 3)
        clock.advance(seconds: 3.9)
        XCTAssertEqual(store.issue(for: reader, client: nil), .failure(.full), "none expired yet")
        clock.advance(seconds: 0.1)
        XCTAssertNoThrow(try issue(store), "the expired ones were purged")
        XCTAssertEqual(store.outstanding, 1)
    }

    func testPurgeKeepsTicketsIssuedLater() throws {
        let (store, clock) = makeStore(timeToLive: 10, capacity: 2, perCredential: 2)
        _ = try issue(store)
        clock.advance(seconds: 5)
        let younger = try issue(store)
        clock.advance(seconds: 5)  // the first expires, the second has 5 s left
        XCTAssertNoThrow(try issue(store))
        XCTAssertTrue(redeems(store, younger))
    }

    func testExpiresInRoundsUp() {
        XCTAssertEqual(StreamTicketStore(timeToLive: 60).expiresIn, 60)
        XCTAssertEqual(StreamTicketStore(timeToLive: 0.5).expiresIn, 1)
        XCTAssertEqual(StreamTicketStore().timeToLive, 60)
    }

    func testEncodingRoundTripsAndIsCanonical() throws {
        let bytes = (0..<StreamTicket.byteCount).map { UInt8($0 * 7 & 0xFF) }
        let text = Base64URL.encode(bytes)
        XCTAssertEqual(text.count, 87)
        XCTAssertEqual(Base64URL.decode(text, count: StreamTicket.byteCount), bytes)
        // The last character carries 2 spare bits; a non-zero spare bit is another spelling.
        var other = Array(text.utf8)
        other[86] += 1
        XCTAssertNil(Base64URL.decode(String(decoding: other, as: UTF8.self), count: StreamTicket.byteCount))
    }

    func testOneClientAddressHoldsAtMostItsShareAndGetsItBackAsTicketsAreUsedOrExpire() throws {
        let clock = ManualClock()
        let store = StreamTicketStore(timeToLive: 60, capacity: 1_000, perClient: 4, now: { clock.seconds })
        var held: [String] = []
        for _ in 0..<4 { held.append(try issue(store, client: "10.0.0.1")) }
        XCTAssertEqual(store.issue(for: reader, client: "10.0.0.1"), .failure(.client(limit: 4)))
        XCTAssertNoThrow(try issue(store, client: "10.0.0.2"), "another address has its own share")
        XCTAssertTrue(redeems(store, held.removeFirst()))
        XCTAssertNoThrow(try issue(store, client: "10.0.0.1"), "a used ticket frees its place")
        clock.advance(seconds: 61)
        for _ in 0..<4 { XCTAssertNoThrow(try issue(store, client: "10.0.0.1"), "expired tickets free theirs") }
    }

    func testOneCredentialHoldsAtMostAQuarterOfTheCapacity() throws {
        let (store, _) = makeStore(capacity: 40)
        XCTAssertEqual(store.perCredential, 10)
        for index in 0..<10 { XCTAssertNoThrow(try issue(store, client: "10.0.1.\(index)")) }
        XCTAssertEqual(store.issue(for: reader, client: "10.0.2.1"), .failure(.credential(limit: 10)))
        XCTAssertNoThrow(try issue(store, other, client: "10.0.2.1"))
    }
}
