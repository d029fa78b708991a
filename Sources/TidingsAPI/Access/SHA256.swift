import Crypto
import TidingsStore

/// SHA-256, for `--tokens` entries that hold a token's digest instead of the token: the file
/// then never contains a usable secret. The digest is swift-crypto's, written in the file as
/// hex (``Hex``). It hashes a presented bearer token (at most a request header's size) once
/// per check.
enum SHA256 {
    /// The 32-byte digest of `message`.
    static func hash(_ message: [UInt8]) -> [UInt8] {
        Array(Crypto.SHA256.hash(data: message))
    }
}
