/// Secrets every instance sharing one store holds alike, kept in the store itself (one row each,
/// made once): what one instance signs, any other verifies, and nothing outside the store (a
/// `--tokens` file, a flag) reveals them.
public protocol ServerSecretStore: Sendable {
    /// The key stream tickets are signed with: ``ServerSecret/byteCount`` random bytes, made by
    /// the first instance that asks (two asking at once get the same row) and the same for every
    /// instance of the store from then on.
    func streamTicketSecret() async throws -> [UInt8]
}

/// The shape of a server secret and how it is made and stored (lower-case hex text).
public enum ServerSecret {
    public static let byteCount = 32
    /// The row's name for the stream tickets' key.
    static let streamTickets = "stream-tickets"

    /// Fresh random bytes, from the system's secure generator.
    static func random() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<byteCount).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The bytes of a stored secret, or nil unless it is exactly `byteCount` bytes in hex.
    static func bytes(hex text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count == byteCount * 2 else { return nil }
        func value(_ character: UInt8) -> UInt8? {
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        for index in stride(from: 0, to: characters.count, by: 2) {
            guard let high = value(characters[index]), let low = value(characters[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}
