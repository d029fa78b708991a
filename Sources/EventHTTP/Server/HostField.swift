import HTTPTypes

/// RFC 9112 §3.2: an HTTP/1.1 request carries exactly one `Host` field (HTTP/1.0 may omit it);
/// a request without one, or with two, is answered `400`. Two `Host` fields are how a request
/// means one host to a proxy and another to the server behind it.
enum HostField {
    /// Why `headers` break the rule for a request of `version` (major × 10 + minor), or nil.
    static func problem(version: Int32, headers: HTTPFields) -> String? {
        var count = 0
        for field in headers where field.name == .hostField {
            count += 1
            if count > 1 { return "The request has more than one Host field." }
        }
        if count == 0 && version >= 11 { return "An HTTP/1.1 request needs a Host field." }
        return nil
    }
}
