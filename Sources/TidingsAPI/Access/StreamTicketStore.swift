import Foundation

/// Single-use stream tickets (openapi.yaml "Access"): a browser's `EventSource` cannot send an
/// `Authorization` header, and long-lived tokens do not belong in URLs, so an authorised client
/// trades its token for a short-lived random ticket and opens one event stream with `?ticket=`.
///
/// A ticket is 256 random bits from `SystemRandomNumberGenerator`, base64url without padding
/// (43 characters). It is looked up by its first 64 bits and then compared in full in constant
/// time, so the lookup's timing says nothing useful about the secret part. Redeeming consumes
/// it; an unknown, used or expired ticket is refused.
///
/// Bounded: at most `capacity` tickets are outstanding (expired ones are purged first); past
/// that `issue` refuses rather than growing without limit. Shares keep one reader from taking
/// them all (everyone else would get 503 for a minute): at most `perClient` (64) outstanding per
/// client address and `perCredential` (a quarter of the capacity) per credential. A page needs
/// one ticket per stream it opens, used within a second, so 64 leaves room for reconnect storms
/// of any honest client.
///
/// Confined to the event loop (the main actor): the access filter and the ticket route both
/// run there, so there is no lock.
final class StreamTicketStore {
    /// An outstanding ticket.
    private struct Entry {
        let secret: [UInt8]
        let expires: UInt64
        /// Whose share it counts against (nil: nobody's).
        let client: String?
        let credential: String?
        /// The environments the issuing credential reaches (nil: every one).
        var environments: Set<String>? = nil
    }

    /// Why `issue` refused.
    enum Refusal: Error, Equatable {
        /// The client address holds `perClient` tickets.
        case client(limit: Int)
        /// The credential holds `perCredential` tickets.
        case credential(limit: Int)
        /// `capacity` tickets are outstanding.
        case full
    }

    /// Seconds a ticket stays valid.
    let timeToLive: Double
    /// Most tickets outstanding at once.
    let capacity: Int
    /// Most tickets one client address holds at once.
    let perClient: Int
    /// Most tickets one credential holds at once.
    let perCredential: Int
    private let now: () -> UInt64
    private var entries: [UInt64: Entry] = [:]
    private var heldByClient: [String: Int] = [:]
    private var heldByCredential: [String: Int] = [:]
    /// Issue order (= expiry order, the lifetime is fixed), for purging from the front.
    private var order: [(key: UInt64, expires: UInt64)] = []
    private var orderStart = 0

    /// The lifetime the server uses: 60 s (openapi.yaml "Access").
    static let defaultTimeToLive: Double = 60

    /// `timeToLive` in seconds; `now` is a monotonic clock in nanoseconds. Both are injected so
    /// that tests (Tests/TidingsAPITests) can watch tickets expire without waiting.
    init(timeToLive: Double = StreamTicketStore.defaultTimeToLive, capacity: Int = 10_000, perClient: Int = 64,
         perCredential: Int? = nil, now: @escaping () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.timeToLive = timeToLive
        self.capacity = capacity
        self.perClient = perClient
        self.perCredential = perCredential ?? max(1, capacity / 4)
        self.now = now
    }

    /// Tickets outstanding (issued, not used, not yet purged).
    var outstanding: Int { entries.count }

    /// Seconds a client may rely on, as `expiresIn` says it.
    var expiresIn: Int { Int(timeToLive.rounded(.up)) }

    /// A fresh ticket, recorded as outstanding; nil when `capacity` tickets are outstanding.
    func issue() -> String? {
        try? issue(client: nil, credential: nil).get()
    }

    /// A fresh ticket counted against `client`'s and `credential`'s shares, or why not.
    func issue(client: String?, credential: String?, environments: Set<String>? = nil) -> Result<String, Refusal> {
        let current = now()
        purgeExpired(current)
        if let client, heldByClient[client, default: 0] >= perClient { return .failure(.client(limit: perClient)) }
        if let credential, heldByCredential[credential, default: 0] >= perCredential {
            return .failure(.credential(limit: perCredential))
        }
        guard entries.count < capacity else { return .failure(.full) }
        var secret: [UInt8]
        var key: UInt64
        repeat {
            secret = Self.randomBytes()
            key = Self.lookupKey(secret)
        } while entries[key] != nil  // 2^-64 per attempt; never loops in practice
        let expires = current &+ UInt64(timeToLive * 1e9)
        entries[key] = Entry(secret: secret, expires: expires, client: client, credential: credential, environments: environments)
        if let client { heldByClient[client, default: 0] += 1 }
        if let credential { heldByCredential[credential, default: 0] += 1 }
        order.append((key, expires))
        return .success(Self.encode(secret))
    }

    /// Forgets the ticket under `key`, and its place in its holders' shares.
    private func remove(_ key: UInt64) {
        guard let entry = entries.removeValue(forKey: key) else { return }
        if let client = entry.client { heldByClient[client] = heldByClient[client]! > 1 ? heldByClient[client]! - 1 : nil }
        if let credential = entry.credential {
            heldByCredential[credential] = heldByCredential[credential]! > 1 ? heldByCredential[credential]! - 1 : nil
        }
    }

    /// A ticket that is not recorded anywhere: what an open server hands out, where streams
    /// need no credential and any ticket is ignored.
    static func unrecordedTicket() -> String { encode(randomBytes()) }

    /// Consumes `ticket`. True when it was outstanding and not expired; false for anything
    /// else (malformed, unknown, already used, expired).
    func redeem(_ ticket: String) -> Bool {
        redeem(ticket, environment: nil) == .valid
    }

    /// What a redeemed ticket is good for.
    enum Redemption: Equatable {
        case valid
        /// Malformed, unknown, already used or expired.
        case invalid
        /// Good, but its credential does not reach the stream's environment (consumed all the same).
        case outOfScope
    }

    /// Consumes `ticket` for a stream of `environment` (nil: no environment to check).
    func redeem(_ ticket: String, environment: String?) -> Redemption {
        guard let presented = Self.decode(ticket) else { return .invalid }
        let key = Self.lookupKey(presented)
        guard let entry = entries[key] else { return .invalid }
        guard ConstantTime.equals(presented, entry.secret) else { return .invalid }
        remove(key)
        guard now() < entry.expires else { return .invalid }
        if let environment, let reach = entry.environments, !reach.contains(environment) { return .outOfScope }
        return .valid
    }

    /// Drops every expired ticket (amortised O(1) per ticket: they expire in issue order).
    private func purgeExpired(_ current: UInt64) {
        while orderStart < order.count, order[orderStart].expires <= current {
            let (key, expires) = order[orderStart]
            // Only if it is still that ticket (a redeemed key may in theory be reissued).
            if entries[key]?.expires == expires { remove(key) }
            orderStart += 1
        }
        if orderStart > 1_024 && orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
    }

    // MARK: Encoding

    static let byteCount = 32

    private static func randomBytes() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        for _ in 0..<(byteCount / 8) {
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        return bytes
    }

    private static func lookupKey(_ bytes: [UInt8]) -> UInt64 {
        var key: UInt64 = 0
        for byte in bytes.prefix(8) { key = key << 8 | UInt64(byte) }
        return key
    }

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// base64url without padding (RFC 4648 §5).
    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let b0 = UInt32(bytes[index])
            let b1 = index + 1 < bytes.count ? UInt32(bytes[index + 1]) : 0
            let b2 = index + 2 < bytes.count ? UInt32(bytes[index + 2]) : 0
            let group = b0 << 16 | b1 << 8 | b2
            let characters = min(4, (bytes.count - index) + 1)
            for position in 0..<characters {
                output.append(alphabet[Int((group >> (18 - 6 * UInt32(position))) & 0x3F)])
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The ticket's bytes, or nil unless it is exactly the encoding of `byteCount` bytes.
    static func decode(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count == (byteCount * 4 + 2) / 3 else { return nil }
        var bits: UInt32 = 0
        var bitCount = 0
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        for character in characters {
            let value: UInt32
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = UInt32(character - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = UInt32(character - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "-"): value = 62
            case UInt8(ascii: "_"): value = 63
            default: return nil
            }
            bits = bits << 6 | value
            bitCount += 6
            if bitCount >= 8 {
                bitCount -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(bitCount)))
                bits &= (1 << UInt32(bitCount)) - 1
            }
        }
        // The leftover bits of the last character must be zero (one canonical spelling).
        guard bytes.count == byteCount, bits == 0 else { return nil }
        return bytes
    }
}
