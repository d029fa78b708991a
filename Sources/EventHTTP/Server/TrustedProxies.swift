internal import CLibevent
public import HTTPTypes
import Foundation

/// The proxies whose word about a client is believed (`--trusted-proxy CIDR`, repeatable).
///
/// A connection from one of them carries other people's requests: its client is the right-most
/// address in `X-Forwarded-For` (or, without that field, `Forwarded: for=`) that is not itself
/// a trusted proxy — every trusted hop appends the address it saw, so everything left of the
/// first untrusted address may be whatever the client made up. From any other peer these
/// fields are ignored: a client cannot spoof its way around a per-client limit.
///
/// ```swift
/// let proxies = try TrustedProxies(["10.0.0.0/8", "::1"])
/// proxies.contains("10.1.2.3")                                     // true
/// proxies.client(peer: "10.1.2.3", headers: ["X-Forwarded-For": "1.2.3.4, 10.0.0.9"])  // "1.2.3.4"
/// ```
public struct TrustedProxies: Sendable, Equatable {
    /// One `address/prefix` range (a bare address is the range of that one address).
    public struct Range: Sendable, Equatable, CustomStringConvertible {
        let bytes: [UInt8]
        let prefix: Int

        /// Parses `10.0.0.0/8`, `192.168.1.7`, `fd00::/8`, `::1`; nil when it is none of these.
        public init?(_ text: String) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = AddressBytes.parse(String(parts[0])) else { return nil }
            let width = address.count * 8
            if parts.count == 2 {
                guard let length = Int(parts[1]), parts[1].allSatisfy(\.isASCII), (0...width).contains(length) else { return nil }
                prefix = length
            } else {
                prefix = width
            }
            bytes = address
        }

        /// Whether `address` (in `AddressBytes` form) lies in this range.
        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var remaining = prefix
            for index in 0..<bytes.count where remaining > 0 {
                let bits = min(8, remaining)
                let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
                if address[index] & mask != bytes[index] & mask { return false }
                remaining -= bits
            }
            return true
        }

        public var description: String { "\(AddressBytes.text(bytes))/\(prefix)" }
    }

    public private(set) var ranges: [Range] = []

    /// No trusted proxy: every peer is its own client.
    public init() {}

    /// Parses every range; throws naming the first that is not `address[/prefix]`.
    public init(_ texts: [String]) throws(InvalidRange) {
        for text in texts {
            let trimmed = text.trimmingCharacters(in: " \t")
            guard let range = Range(trimmed) else { throw InvalidRange(text: text) }
            ranges.append(range)
        }
    }

    /// A text that is not a CIDR range or an address.
    public struct InvalidRange: Error, Sendable, CustomStringConvertible {
        public let text: String
        public var description: String { "'\(text)' is not an IP address or CIDR range (e.g. 10.0.0.0/8, fd00::/8, 127.0.0.1)" }
    }

    public var isEmpty: Bool { ranges.isEmpty }

    /// Whether the peer `address` (text as `getpeername` gives it) is a trusted proxy.
    public func contains(_ address: String) -> Bool {
        guard !ranges.isEmpty, let bytes = AddressBytes.parse(address) else { return false }
        return contains(bytes: bytes)
    }

    private func contains(bytes: [UInt8]) -> Bool {
        ranges.contains { $0.contains(bytes) }
    }

    /// The client a request from `peer` speaks for: `peer` itself unless it is a trusted proxy;
    /// else the right-most address of the forwarding fields that is not a trusted proxy (the
    /// left-most when all are; `peer` when there are none). An entry that is not an address
    /// (`unknown`, a hidden `_name`) ends the walk: the client is then `unknown`, never
    /// something to the left of it.
    public func client(peer: String, headers: HTTPFields) -> String {
        guard contains(peer) else { return peer }
        var entries = Self.forwardedFor(headers)
        if entries.isEmpty { return peer }
        var leftMost = peer
        while let entry = entries.popLast() {
            guard let bytes = AddressBytes.parse(entry) else { return "unknown" }
            leftMost = AddressBytes.text(bytes)
            if !contains(bytes: bytes) { return leftMost }
        }
        return leftMost
    }

    /// Most entries read from the forwarding fields (from the right); a chain longer than
    /// this is cut on its left, the part a client could have padded.
    static let maxEntries = 32

    /// The addresses of `X-Forwarded-For` (every field, in order), or without one those of
    /// `Forwarded`'s `for=` parameters; at most `maxEntries`, the right-most kept.
    static func forwardedFor(_ headers: HTTPFields) -> [String] {
        let forwardedFor = headers[values: .xForwardedFor]
        if !forwardedFor.isEmpty {
            let entries = forwardedFor.flatMap { $0.split(separator: ",") }
            return entries.suffix(maxEntries).map { forwardedNode($0.trimmingCharacters(in: " \t")) }
        }
        let forwarded = headers[values: .forwarded]
        guard !forwarded.isEmpty else { return [] }
        var result: [String] = []
        for element in forwarded.flatMap({ $0.split(separator: ",") }) {
            for pair in element.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: " \t").lowercased() == "for" else { continue }
                result.append(Self.forwardedNode(parts[1].trimmingCharacters(in: " \t")))
            }
        }
        return Array(result.suffix(maxEntries))
    }

    /// A forwarded node, of `Forwarded: for=` (RFC 7239) or an `X-Forwarded-For` entry, without
    /// quotes, brackets or port: `192.0.2.43`, `"192.0.2.43:47011"`, `1.2.3.4:5678`,
    /// `"[2001:db8::1]:4711"`, `[::1]:80`, `[::1]` → the address; a bare IPv6 address (with its
    /// colons, as `X-Forwarded-For` often carries one) stays whole.
    static func forwardedNode(_ text: String) -> String {
        var node = Substring(text)
        if node.hasPrefix("\""), node.hasSuffix("\""), node.count >= 2 { node = node.dropFirst().dropLast() }
        if node.hasPrefix("[") {
            guard let close = node.firstIndex(of: "]") else { return String(node) }
            return String(node[node.index(after: node.startIndex)..<close])
        }
        // IPv4 with a port: one colon (an IPv6 address has at least two).
        if let colon = node.firstIndex(of: ":"), node.lastIndex(of: ":") == colon { return String(node[..<colon]) }
        return String(node)
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        let skip = Set(set.unicodeScalars)
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !skip.contains($0) }),
              let last = scalars.lastIndex(where: { !skip.contains($0) }) else { return "" }
        return String(scalars[first...last])
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}

/// IP addresses as bytes (4 for IPv4, 16 for IPv6; an IPv4-mapped IPv6 address as its IPv4).
enum AddressBytes {
    static func parse(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return withUnsafeBytes(of: &v4) { Array($0) }
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &v6) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF { return Array(bytes[12...]) }
        return bytes
    }

    static func text(_ bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) } != nil
        guard ok else { return "unknown" }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
