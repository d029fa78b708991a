public import HTTPTypes

// EventHTTP speaks swift-http-types: `HTTPRequest.Method`, `HTTPResponse.Status`, `HTTPFields`.
// This file holds the few pieces the server and the API need on top of them.

extension HTTPRequest.Method {
    /// The methods the server reads and the router knows, in the order `Allow` lists them.
    public static let served: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options, .trace, .connect]

    /// This method's position in `served` (nil for another): a fixed slot for per-method tables
    /// (the router's handlers, request metrics) without hashing the method's name per request.
    public var servedIndex: Int? {
        switch self {
        case .get: 0
        case .head: 1
        case .post: 2
        case .put: 3
        case .patch: 4
        case .delete: 5
        case .options: 6
        case .trace: 7
        case .connect: 8
        default: nil
        }
    }
}

extension HTTPResponse.Status {
    /// The reason phrase for the status line and a problem's default title: the standard one
    /// (a status built from a bare code has none, so it gets `Status <code>`).
    var phrase: String { reasonPhrase.isEmpty ? "Status \(code)" : reasonPhrase }

    /// Whether an answer with this status never carries a body (1xx, 204, 304).
    var forbidsBody: Bool { code == 204 || code == 304 || (100..<200).contains(code) }
}

extension HTTPField.Name {
    /// Asks nginx (and similar proxies) not to buffer an event stream.
    public static let xAccelBuffering = HTTPField.Name("X-Accel-Buffering")!
    /// The addresses a request passed through, the client's first (de-facto standard).
    public static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
    /// RFC 7239's forwarding record (`for=` is read when `X-Forwarded-For` is absent).
    public static let forwarded = HTTPField.Name("Forwarded")!
    /// The request's `Host` field as it arrived (swift-http-types keeps it as the request's
    /// authority and does not name it; this server reads fields, not a parsed authority).
    public static let hostField = HTTPField.Name("Host")!
}

extension HTTPFields {
    /// The value of the first field named `name`, or nil. The library's `self[name]` joins every
    /// such field with commas; where only one value makes sense (a credential, a content type,
    /// an origin) the first field is the one that counts, as it always was here.
    public func first(_ name: HTTPField.Name) -> String? {
        // Names are compared only when their lengths match: comparing two different short
        // names costs about 50 instructions, and requests look up several fields each.
        let length = name.canonicalName.utf8.count
        for field in self where field.name.canonicalName.utf8.count == length && field.name == name { return field.value }
        return nil
    }
}
