import HTTPTypes

/// RFC 9112 §3.2: an HTTP/1.1 request carries exactly one `Host` field (HTTP/1.0 may omit it);
/// a request without one, or with two, or with a port that is not one, is answered `400`. Two
/// `Host` fields are how a request means one host to a proxy and another to the server behind it.
enum HostField {
    /// Why `headers` break the rule for a request of `version` (major × 10 + minor), or nil.
    static func problem(version: Int32, headers: HTTPFields) -> String? {
        var host: String?
        // Names are compared only when their lengths match (most fields' do not).
        for field in headers where field.name.canonicalName.utf8.count == 4 && field.name == .hostField {
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
        // Over the contiguous bytes: the `UTF8View` index walk (`lastIndex(of:)`, slices) cost
        // about 750 instructions for `127.0.0.1:8080`, on every request.
        var value = value
        return value.withUTF8 { bytes in
            let count = bytes.count
            var colon = -1
            if count > 0, bytes[0] == UInt8(ascii: "[") {
                guard let close = bytes.firstIndex(of: UInt8(ascii: "]")) else { return true }
                guard close + 1 < count, bytes[close + 1] == UInt8(ascii: ":") else { return true }
                colon = close + 1
            } else {
                var index = count - 1
                while index >= 0, bytes[index] != UInt8(ascii: ":") { index -= 1 }
                colon = index
            }
            guard colon >= 0 else { return true }
            // An empty port is allowed (RFC 3986 §3.2.3); anything else must be a port number.
            let digits = count - colon - 1
            if digits == 0 { return true }
            guard digits <= 5 else { return false }
            var port = 0
            for index in colon + 1..<count {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
                port = port * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return port <= 65535
        }
    }
}
