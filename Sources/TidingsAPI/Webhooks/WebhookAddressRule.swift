/// Which addresses a webhook may be delivered to (API.md: loopback, private and link-local
/// ranges are refused unless `--webhook-allow-private`). Checked against every address libcurl
/// resolved and is about to connect to (``CurlAddressGuard``), so a public name that resolves
/// inside is refused as well.
enum WebhookAddressRule {
    /// Why `address` is refused (nil: it may be connected to).
    static func refusal(_ address: IPAddress) -> String? {
        guard let range = range(of: address) else { return nil }
        return "\(address) is a \(range) address (refused unless --webhook-allow-private is set)"
    }

    /// The kind of range `address` is in, nil for a public one.
    static func range(of address: IPAddress) -> String? {
        let b = address.bytes
        if b.count == 4 { return range(ipv4: b) }
        guard b.count == 16 else { return "unknown" }
        if b.allSatisfy({ $0 == 0 }) { return "unspecified" }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return "loopback" }
        // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d):
        // judged by the IPv4 address inside.
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xFF && b[11] == 0xFF { return range(ipv4: Array(b[12...])) }
        if b[0..<12].allSatisfy({ $0 == 0 }) { return range(ipv4: Array(b[12...])) }
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xFF && b[3] == 0x9B && b[4..<12].allSatisfy({ $0 == 0 }) {
            return range(ipv4: Array(b[12...]))
        }
        if b[0] & 0xFE == 0xFC { return "private (unique local)" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return "link-local" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return "private (site-local)" }
        if b[0] == 0xFF { return "multicast" }
        return nil
    }

    private static func range(ipv4 b: [UInt8]) -> String? {
        switch (b[0], b[1]) {
        case (0, _): return "unspecified"
        case (10, _): return "private"
        case (100, 64...127): return "private (shared)"
        case (127, _): return "loopback"
        case (169, 254): return "link-local"
        case (172, 16...31): return "private"
        case (192, 168): return "private"
        case (224..., _): return "multicast or reserved"
        default: return nil
        }
    }
}
