import CCurl
import Foundation

/// What a ``CurlTransfer`` does beyond the posts feed's GET, for the other outbound requests
/// Tidings makes through the same client (webhook deliveries): a method and a body, a connect
/// deadline of its own, redirects not followed at all, the address rule checked against the
/// address libcurl resolved (``CurlAddressGuard``), and proxies from the environment ignored
/// (a proxy would connect in its place, out of the rule's reach).
struct CurlExchange: Sendable {
    /// `POST` with ``body`` when set; a GET otherwise.
    var body: [UInt8]?
    /// At most this long to connect (nil: the request's overall deadline only).
    var connectTimeout: Duration?
    /// False: a redirect is the answer (its status is returned, never followed).
    var followsRedirects = true
    /// Why an address may not be connected to (nil: it may), checked for every address libcurl
    /// tries; nil: no rule.
    var addressRule: (@Sendable (IPAddress) -> String?)?
    /// A final answer whose body passes `maxBodyBytes` is returned with its status and no body
    /// (instead of failing): a webhook receiver's status is what counts, not its chatter.
    var keepsStatusOfLongReply = false

    /// The posts feed's GET, as before this type existed.
    static let feed = CurlExchange()

    /// Sets what the exchange adds on `easy` (after the feed's own options).
    func configure(_ easy: UnsafeMutableRawPointer, addressGuard: CurlAddressGuard?) {
        if let body {
            tidings_curl_set_long(easy, CURLOPT_POSTFIELDSIZE, body.count)
            _ = body.withUnsafeBytes { bytes in
                // COPYPOSTFIELDS: libcurl keeps its own copy, so the body's lifetime is not ours to mind.
                tidings_curl_set_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
            }
        }
        if let connectTimeout {
            let (seconds, attoseconds) = connectTimeout.components
            tidings_curl_set_long(easy, CURLOPT_CONNECTTIMEOUT_MS, max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)))
        }
        if addressRule != nil {
            tidings_curl_set_string(easy, CURLOPT_PROXY, "")
            tidings_curl_set_long(easy, CURLOPT_FORBID_REUSE, 1)
        }
        if let addressGuard {
            tidings_curl_set_pointer(easy, CURLOPT_OPENSOCKETDATA, Unmanaged.passUnretained(addressGuard).toOpaque())
            tidings_curl_set_opensocket_callback(easy) { context, _, address in
                guard let context, let address else { return CURL_SOCKET_BAD }
                let addressGuard = Unmanaged<CurlAddressGuard>.fromOpaque(context).takeUnretainedValue()
                return addressGuard.open(address)
            }
        }
    }
}

/// An IPv4 or IPv6 address as bytes (4 or 16).
struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    let bytes: [UInt8]

    var description: String {
        if bytes.count == 4 { return bytes.map(String.init).joined(separator: ".") }
        var groups: [String] = []
        for index in stride(from: 0, to: bytes.count, by: 2) {
            groups.append(String(UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]), radix: 16))
        }
        return groups.joined(separator: ":")
    }
}

/// The opensocket callback's side of ``CurlExchange/addressRule``: every address libcurl is
/// about to connect to — resolved, so a name pointing inside is caught too — is checked before a
/// socket exists; a refused one gets no socket (libcurl then fails to connect) and its reason is
/// kept for the transfer's outcome. Used by the transfer's thread only.
final class CurlAddressGuard {
    private let rule: @Sendable (IPAddress) -> String?
    private(set) var refusal: String?

    init(rule: @escaping @Sendable (IPAddress) -> String?) { self.rule = rule }

    func open(_ address: UnsafeMutablePointer<curl_sockaddr>) -> curl_socket_t {
        var bytes = [UInt8](repeating: 0, count: 16)
        let family = bytes.withUnsafeMutableBufferPointer { tidings_curl_sockaddr_bytes(address, $0.baseAddress) }
        guard family == 4 || family == 6 else {
            refusal = "only IPv4 and IPv6 addresses are connected to"
            return CURL_SOCKET_BAD
        }
        let ip = IPAddress(bytes: Array(bytes.prefix(family == 4 ? 4 : 16)))
        if let why = rule(ip) {
            refusal = why
            return CURL_SOCKET_BAD
        }
        return tidings_curl_open_socket(address)
    }
}
