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

    /// The bytes of a stored secret, or nil unless it is exactly `byteCount` bytes in hex.
    static func bytes(hex text: String) -> [UInt8]? {
        guard let bytes = Hex.bytes(text), bytes.count == byteCount else { return nil }
        return bytes
    }
}
