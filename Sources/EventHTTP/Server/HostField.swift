import HTTPTypes

/// RFC 9112 §3.2: an HTTP/1.1 request carries exactly one `Host` field (HTTP/1.0 may omit it);
/// a request without one, or with two, or with a port that is not one, is answered `400`. Two
/// `Host` fields are how a request means one host to a proxy and another to the server behind it.
enum HostField {
    /// Why `headers` break the rule for a request of `version` (major × 10 + minor), or nil.
    static func problem(version: Int32, headers: HTTPFields) -> String? {
        var host: String?
        for field in headers where field.name == .hostField {
            if host != nil { return "The request has more than one Host field." }
            host = field.value
        }
        guard let host else { return version >= 11 ? "An HTTP/1.1 request needs a Host field." : nil }
        if !hasValidPort(host) {
            return "The Host field's port is not a number from 0 to 65535."
        }
        return nil
    }

    /// Whether the port of a `Host` value (`name:port`, `[v6]:port`), if it has one, is a TCP
    /// port: at most five digits, at most 65535 (`:99999999` is a 400, not a port read modulo
    /// something). What the host part names is the routes' business.
    static func hasValidPort(_ value: String) -> Bool {
        let utf8 = value.utf8
        let colon: String.UTF8View.Index?
        if utf8.first == UInt8(ascii: "[") {
            guard let close = utf8.firstIndex(of: UInt8(ascii: "]")) else { return true }
            let after = utf8.index(after: close)
            guard after != utf8.endIndex, utf8[after] == UInt8(ascii: ":") else { return true }
            colon = after
        } else {
            colon = utf8.lastIndex(of: UInt8(ascii: ":"))
        }
        guard let colon else { return true }
        let digits = utf8[utf8.index(after: colon)...]
        // An empty port is allowed (RFC 3986 §3.2.3); anything else must be a port number.
        if digits.isEmpty { return true }
        guard digits.count <= 5, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return false }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } <= 65535
    }
}
