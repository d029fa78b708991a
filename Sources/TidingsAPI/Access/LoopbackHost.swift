import HTTPTypes
import EventHTTP
import Foundation

/// On a server listening on loopback only, requests must name a loopback host (`localhost` or a
/// name under it, `127.x.x.x`, `[::1]`, with or without a port); any other `Host` is answered
/// `421 Misdirected Request`.
///
/// Why: a web page can make its own host name resolve to 127.0.0.1 (DNS rebinding) and then
/// read and write the local server as same-origin, with no CORS check; the one thing it cannot
/// change is the `Host` its browser sends. Router-wide middleware, so every route, event
/// streams included, is covered. A server listening on another address (`0.0.0.0` in the
/// container, behind a proxy) serves any host name.
struct LoopbackHost: Middleware {
    /// nil unless `listenHost` is a loopback address or `localhost`.
    init?(listenHost: String) {
        guard Self.isLoopback(host: listenHost.lowercased()) else { return nil }
    }

    func intercept(_ request: Request) -> Response? {
        // No Host at all is HTTP/1.0 (HTTP/1.1 without one is a 400 before routing).
        guard let value = request.headers.first(.hostField) else { return nil }
        if Self.isCommonLoopback(value) { return nil }
        if let host = Self.hostName(of: value), Self.isLoopback(host: host) { return nil }
        return .problem(status: .misdirectedRequest,
                        detail: "This server listens on loopback and answers only to localhost, 127.0.0.1 or [::1], not to the Host this request names.")
    }

    /// The values nearly every local client sends — `127.0.0.1`, `localhost` or `[::1]`, each
    /// with or without a port — recognised over the bytes, without lower-casing or splitting
    /// strings (which cost about 24K instructions a request, 30% of a read). Anything else takes
    /// the general path; this only ever says yes where it would too.
    static func isCommonLoopback(_ value: String) -> Bool {
        var value = value
        return value.withUTF8 { bytes in
            for name in commonNames where bytes.count >= name.count
                && memcmp(bytes.baseAddress!, name, name.count) == 0 {
                let rest = bytes[name.count...]
                if rest.isEmpty { return true }
                if rest.first == UInt8(ascii: ":"), rest.count > 1, rest.count <= 6,
                   rest.dropFirst().allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) { return true }
            }
            return false
        }
    }

    private static let commonNames: [[UInt8]] = ["127.0.0.1", "localhost", "[::1]"].map { Array($0.utf8) }

    /// The host part of a `Host` value, lower-cased, brackets kept for IPv6 (`[::1]:8080` →
    /// `[::1]`); nil when it is malformed.
    static func hostName(of value: String) -> String? {
        let text = value.lowercased()
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.first == ":" && rest.dropFirst().allSatisfy(\.isASCIIDigit)) else { return nil }
            return String(text[...close])
        }
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2, !parts[1].allSatisfy(\.isASCIIDigit) { return nil }
        return String(parts[0])
    }

    /// `localhost` and names under it (RFC 6761: always loopback, never sent to DNS), IPv4
    /// 127.0.0.0/8 literals, and IPv6 `::1`.
    static func isLoopback(host: String) -> Bool {
        var name = host
        if name.hasSuffix(".") { name.removeLast() }
        if name == "localhost" || name.hasSuffix(".localhost") { return true }
        if name == "[::1]" || name == "::1" { return true }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        guard octets.count == 4, octets[0] == "127" else { return false }
        return octets.allSatisfy { octet in
            !octet.isEmpty && octet.count <= 3 && octet.allSatisfy(\.isASCIIDigit) && Int(octet)! <= 255
        }
    }
}

private extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
