import Crypto
import Foundation
import TidingsStore

/// A stream ticket's contents and its self-verifying encoding, so that any instance sharing the
/// store can check a ticket another issued without asking anyone:
///
///     version (1) | expires, unix seconds (8, big-endian) | nonce (16 random bytes)
///     | issuer tag (first 8 bytes of SHA-256 of the credential's name) | HMAC-SHA256 (32)
///
/// base64url without padding: 87 characters. The HMAC key is the server-wide ticket secret: 32
/// random bytes made once and kept in the store (``ServerSecretStore``), so every instance of
/// one store signs and verifies alike, and nothing outside the store can mint a ticket — not even
/// someone who reads a `--tokens` file of digests (version 1 keyed the HMAC with a key derived
/// from the credential's digest, so such a reader could; version 1 tickets are refused). The
/// MAC covers the bytes above and the issuing credential's secret digest (its token's SHA-256,
/// or the digest a `--tokens` entry gives), never carried in the ticket: a ticket names its
/// issuer, and a credential that is removed or given another token revokes its tickets. The
/// nonce names the ticket for single use (see ``StreamTicketClaims``).
struct StreamTicket: Equatable {
    static let version: UInt8 = 2
    static let issuerCount = 8
    static let macCount = 32
    static let signedCount = 1 + 8 + 16 + issuerCount
    static let byteCount = signedCount + macCount
    /// Seconds a ticket's expiry may lie past this instance's now + lifetime (another
    /// instance's clock may run ahead a little).
    static let clockSkew: Double = 5

    /// 16 random bytes, as two words (a cheap dictionary key).
    struct Nonce: Hashable, Sendable {
        let high: UInt64
        let low: UInt64

        static func random() -> Nonce {
            var generator = SystemRandomNumberGenerator()
            return Nonce(high: generator.next(), low: generator.next())
        }

        var bytes: [UInt8] { Self.bigEndian(high) + Self.bigEndian(low) }
        /// Lower-case hex, for the store's claim name.
        var hex: String { Hex.string(bytes) }

        static func bigEndian(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
    }

    /// What the stream route claims in the shared store before the stream opens.
    struct Claim: Equatable, Sendable {
        let nonce: Nonce
        /// Unix seconds.
        let expires: UInt64
    }

    let expires: UInt64
    let nonce: Nonce
    let issuer: [UInt8]

    /// The issuer tag of the credential named `name`.
    static func issuerTag(_ name: String) -> [UInt8] { Array(SHA256.hash(Array(name.utf8)).prefix(issuerCount)) }

    /// What binds a ticket to `credential` inside its MAC: the credential's secret digest.
    static func binding(for credential: NamedCredential) -> [UInt8] {
        switch credential.secret {
        case let .token(bytes): SHA256.hash(bytes)
        case let .sha256(digest): digest
        }
    }

    private var signedBytes: [UInt8] { [Self.version] + Nonce.bigEndian(expires) + nonce.bytes + issuer }

    /// The MAC of `message` for the credential bound by `binding`, keyed by the server's `secret`.
    private static func mac(_ message: [UInt8], binding: [UInt8], secret: [UInt8]) -> [UInt8] {
        Array(HMAC<Crypto.SHA256>.authenticationCode(for: message + binding, using: SymmetricKey(data: secret)))
    }

    /// The ticket's text, signed with the server's `secret` for `credential`.
    func signed(with secret: [UInt8], for credential: NamedCredential) -> String {
        signed(with: secret, binding: Self.binding(for: credential))
    }

    /// The ticket's text, signed with `secret` over `binding` (an open server's unrecorded ticket binds nothing).
    func signed(with secret: [UInt8], binding: [UInt8]) -> String {
        let message = signedBytes
        return Base64URL.encode(message + Self.mac(message, binding: binding, secret: secret))
    }

    /// A decoded ticket and the tag it carries, not yet verified.
    struct Parsed {
        let ticket: StreamTicket
        let message: [UInt8]
        let tag: [UInt8]

        /// Whether the tag is the ticket's MAC under the server's `secret` for `credential`,
        /// compared in constant time.
        func verifies(with secret: [UInt8], for credential: NamedCredential) -> Bool {
            ConstantTime.equals(tag, StreamTicket.mac(message, binding: StreamTicket.binding(for: credential), secret: secret))
        }
    }

    /// The ticket in `text`, or nil unless it is exactly a current-version ticket's encoding.
    static func parse(_ text: String) -> Parsed? {
        guard let bytes = Base64URL.decode(text, count: byteCount), bytes[0] == version else { return nil }
        func word(_ at: Int) -> UInt64 { bytes[at..<at + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        let ticket = StreamTicket(expires: word(1), nonce: Nonce(high: word(9), low: word(17)),
                                  issuer: Array(bytes[25..<signedCount]))
        return Parsed(ticket: ticket, message: Array(bytes[0..<signedCount]), tag: Array(bytes[signedCount...]))
    }
}

/// base64url without padding (RFC 4648 §5), one canonical spelling.
enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

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

    /// The bytes, or nil unless `text` is exactly the encoding of `count` bytes.
    static func decode(_ text: String, count: Int) -> [UInt8]? {
        let characters = Array(text.utf8.prefix((count * 4 + 2) / 3 + 1))
        guard characters.count == (count * 4 + 2) / 3 else { return nil }
        var bits: UInt32 = 0
        var bitCount = 0
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
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
        guard bytes.count == count, bits == 0 else { return nil }
        return bytes
    }
}
