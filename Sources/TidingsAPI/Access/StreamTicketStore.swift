import Foundation

/// Stream tickets (API.md "Access"): a browser's `EventSource` cannot send an `Authorization`
/// header, and long-lived tokens do not belong in URLs, so an authorised client trades its token
/// for a short-lived ticket and opens one event stream with `?ticket=`.
///
/// A ticket is self-verifying (``StreamTicket``): signed with the server-wide ticket secret kept
/// in the store (``secret``) over the issuing credential's digest, so any instance of the store
/// started with the same credentials accepts a ticket any other issued, with no lookup (API.md
/// "Several instances"), and nothing that is not in the store can mint one.
/// Single use across the cluster is the stream route's claim of the ticket's nonce in the shared
/// store (``StreamTicketClaims``); this type keeps the local parts: the issue shares and a local
/// used-set, the fast path that refuses a ticket already used on this instance without asking
/// the store.
///
/// Bounded: at most `capacity` tickets issued here are counted as outstanding (expired ones are
/// purged first); past that `issue` refuses rather than growing without limit. Shares keep one
/// reader from taking them all (everyone else would get 503 for a minute): at most `perClient`
/// (64) outstanding per client address and `perCredential` (a quarter of the capacity) per
/// credential. The used-set holds at most `4 × capacity` nonces until their tickets expire; when
/// full, the shared store alone decides.
///
/// Confined to the event loop (the main actor): the access filter and the ticket route both
/// run there, so there is no lock.
final class StreamTicketStore {
    /// Why `issue` refused.
    enum Refusal: Error, Equatable {
        /// The client address holds `perClient` tickets.
        case client(limit: Int)
        /// The credential holds `perCredential` tickets.
        case credential(limit: Int)
        /// `capacity` tickets are outstanding.
        case full
    }

    /// A ticket issued here and not yet used: whose shares it counts against.
    private struct Issued {
        let expires: UInt64
        let client: String?
        let credential: String?
    }

    /// Seconds a ticket stays valid.
    let timeToLive: Double
    /// Most tickets issued here outstanding at once.
    let capacity: Int
    /// Most tickets one client address holds at once.
    let perClient: Int
    /// Most tickets one credential holds at once.
    let perCredential: Int
    /// Wall-clock seconds since 1970 (a ticket's expiry is read by every instance).
    private let now: () -> Double
    /// The HMAC key of every ticket: the store's stream ticket secret (``ServerSecretStore``),
    /// set at start-up once the store is open. Until then (and for a store that keeps none)
    /// random bytes of this process's own, so a ticket is never signed with a key anyone knows.
    var secret: [UInt8] = StreamTicketStore.randomSecret()
    private var issued: [StreamTicket.Nonce: Issued] = [:]
    private var heldByClient: [String: Int] = [:]
    private var heldByCredential: [String: Int] = [:]
    /// Issue order (= expiry order, the lifetime is fixed), for purging from the front.
    private var issueOrder = ExpiryQueue()
    /// Nonces redeemed on this instance, until their tickets expire.
    private var used: [StreamTicket.Nonce: UInt64] = [:]
    private var usedOrder = ExpiryQueue()

    /// The lifetime the server uses: 60 s (API.md "Access").
    static let defaultTimeToLive: Double = 60

    /// `timeToLive` in seconds; `now` is the wall clock in seconds since 1970. Both are injected
    /// so that tests (Tests/TidingsAPITests) can watch tickets expire without waiting.
    init(timeToLive: Double = StreamTicketStore.defaultTimeToLive, capacity: Int = 10_000, perClient: Int = 64,
         perCredential: Int? = nil, now: @escaping () -> Double = { Date().timeIntervalSince1970 }) {
        self.timeToLive = timeToLive
        self.capacity = capacity
        self.perClient = perClient
        self.perCredential = perCredential ?? max(1, capacity / 4)
        self.now = now
    }

    /// 32 bytes from the system's secure generator.
    static func randomSecret() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// Tickets issued here outstanding (not used here, not yet purged).
    var outstanding: Int { issued.count }

    /// Seconds a client may rely on, as `expiresIn` says it.
    var expiresIn: Int { Int(timeToLive.rounded(.up)) }

    /// A fresh ticket signed for `credential`, counted against `client`'s and the credential's
    /// shares, or why not.
    func issue(for credential: NamedCredential, client: String?) -> Result<String, Refusal> {
        let current = now()
        purgeExpired(current)
        if let client, heldByClient[client, default: 0] >= perClient { return .failure(.client(limit: perClient)) }
        if heldByCredential[credential.name, default: 0] >= perCredential {
            return .failure(.credential(limit: perCredential))
        }
        guard issued.count < capacity else { return .failure(.full) }
        // Whole seconds, rounded up: a ticket is good for at least `timeToLive`.
        let expires = UInt64((current + timeToLive).rounded(.up))
        let ticket = StreamTicket(expires: expires, nonce: .random(), issuer: StreamTicket.issuerTag(credential.name))
        issued[ticket.nonce] = Issued(expires: expires, client: client, credential: credential.name)
        if let client { heldByClient[client, default: 0] += 1 }
        heldByCredential[credential.name, default: 0] += 1
        issueOrder.append(ticket.nonce, expires)
        return .success(ticket.signed(with: secret, for: credential))
    }

    /// A ticket that is not recorded anywhere: what an open server hands out, where streams
    /// need no credential and any ticket is ignored.
    static func unrecordedTicket() -> String {
        StreamTicket(expires: 0, nonce: .random(), issuer: [UInt8](repeating: 0, count: StreamTicket.issuerCount))
            .signed(with: [UInt8](repeating: 0, count: 32), binding: [])
    }

    /// What a presented ticket is good for, as this instance can tell on its own.
    enum Redemption: Equatable {
        /// Signed by a current reading credential, not expired, not used here: good once its
        /// nonce is claimed in the shared store (``StreamTicketClaims``).
        case valid(StreamTicket.Claim)
        /// Malformed, forged, expired, its credential gone, or already used here.
        case invalid
        /// Good, but its credential does not reach the stream's environment (used all the same).
        case outOfScope
    }

    /// Checks `ticket` against `readers` (the credentials that may read now: a credential removed
    /// since revokes its tickets) for a stream of `environment` (nil: no environment to check),
    /// and marks it used here. The signature is compared in constant time.
    func redeem(_ ticket: String, readers: [NamedCredential], environment: String?) -> Redemption {
        guard let parsed = StreamTicket.parse(ticket) else { return .invalid }
        // Every credential under the ticket's issuer name is tried (several `--api-token`s share
        // the name `api`); every one of them is compared, with no early exit.
        var signer: NamedCredential?
        for credential in readers where ConstantTime.equals(StreamTicket.issuerTag(credential.name), parsed.ticket.issuer) {
            let good = parsed.verifies(with: secret, for: credential)
            if good && signer == nil { signer = credential }
        }
        guard let signer else { return .invalid }
        let current = now()
        let expires = parsed.ticket.expires
        // Not expired, and not signed for longer than the lifetime (plus a clock's skew).
        guard Double(expires) > current, Double(expires) <= current + timeToLive + StreamTicket.clockSkew else { return .invalid }
        purgeExpired(current)
        let nonce = parsed.ticket.nonce
        guard used[nonce] == nil else { return .invalid }
        if used.count < 4 * capacity {
            used[nonce] = expires
            usedOrder.append(nonce, expires)
        }
        release(nonce)
        if let environment, let reach = signer.environments, !reach.contains(environment) { return .outOfScope }
        return .valid(StreamTicket.Claim(nonce: nonce, expires: expires))
    }

    /// Frees the shares of a ticket issued here.
    private func release(_ nonce: StreamTicket.Nonce) {
        guard let entry = issued.removeValue(forKey: nonce) else { return }
        if let client = entry.client { heldByClient[client] = heldByClient[client]! > 1 ? heldByClient[client]! - 1 : nil }
        if let credential = entry.credential {
            heldByCredential[credential] = heldByCredential[credential]! > 1 ? heldByCredential[credential]! - 1 : nil
        }
    }

    /// Drops every expired ticket and used nonce (amortised O(1) each: they expire in order).
    private func purgeExpired(_ current: Double) {
        issueOrder.popExpired(before: current) { nonce, expires in
            if issued[nonce]?.expires == expires { release(nonce) }
        }
        usedOrder.popExpired(before: current) { nonce, expires in
            if used[nonce] == expires { used[nonce] = nil }
        }
    }
}

/// Nonces in expiry order, popped from the front as they expire.
private struct ExpiryQueue {
    private var entries: [(nonce: StreamTicket.Nonce, expires: UInt64)] = []
    private var start = 0

    mutating func append(_ nonce: StreamTicket.Nonce, _ expires: UInt64) { entries.append((nonce, expires)) }

    mutating func popExpired(before current: Double, _ body: (StreamTicket.Nonce, UInt64) -> Void) {
        while start < entries.count, Double(entries[start].expires) <= current {
            body(entries[start].nonce, entries[start].expires)
            start += 1
        }
        if start > 1_024 && start * 2 > entries.count {
            entries.removeFirst(start)
            start = 0
        }
    }
}
