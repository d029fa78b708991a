import Foundation
public import TestFixtures

/// The tests' one way to talk to a Tidings server, whatever carries it: in-process through the
/// real router and middleware (``InProcessTidings``, no socket) or live over loopback to the real
/// binary. A test written against this protocol reads the same on either; route-level tests run
/// in-process, and end-to-end tests keep what only a process shows (signals, sockets, framing,
/// several processes).
///
/// ```swift
/// let server = try InProcessTidings { $0.apiTokens = ["secret"] }
/// let reply = try server.put("age", 6, headers: ["Authorization": "Bearer secret"])
/// XCTAssertEqual(reply.value, ["key": "age", "value": 6, "default": 5, "type": "integer", "revision": 1])
/// let stream = try server.openEventStream("/preferences/age/events")
/// XCTAssertEqual(try stream.nextEvent().value?["value"], 6)
/// ```
public protocol TidingsTransport: AnyObject {
    /// What `openEventStream` returns.
    associatedtype Stream: EventStreamReading
    /// Sends one request and returns its answer. A transport adds `Host` and, with a body (or
    /// for POST, PUT and PATCH), `Content-Length`, as a client does.
    func request(_ method: String, _ target: String, headers: [String: String], body: [UInt8]) throws -> HTTPReply
    /// Opens an event stream (adds `Accept: text/event-stream`); the reply head is read.
    func openEventStream(_ target: String, headers: [String: String]) throws -> Stream
}

extension TidingsTransport {
    /// One request without a body.
    public func request(_ method: String, _ target: String, headers: [String: String] = [:]) throws -> HTTPReply {
        try request(method, target, headers: headers, body: [])
    }

    /// Sends `json` (any JSONSerialization value) as an `application/json` body.
    public func request(_ method: String, _ target: String, headers: [String: String] = [:], json: Any) throws -> HTTPReply {
        var headers = headers
        if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        let body = try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed])
        return try request(method, target, headers: headers, body: Array(body))
    }

    /// A body sent as raw UTF-8 text with an explicit (or no) Content-Type.
    public func request(_ method: String, _ target: String, contentType: String?, text: String,
                        headers: [String: String] = [:]) throws -> HTTPReply {
        var headers = headers
        if let contentType { headers["Content-Type"] = contentType }
        return try request(method, target, headers: headers, body: Array(text.utf8))
    }

    /// `GET target`.
    public func get(_ target: String, headers: [String: String] = [:]) throws -> HTTPReply {
        try request("GET", target, headers: headers, body: [])
    }

    /// Opens an event stream with no extra headers.
    public func openEventStream(_ target: String) throws -> Stream {
        try openEventStream(target, headers: [:])
    }

    /// `PUT /preferences/{key}` with `{"value": value}`.
    public func put(_ key: String, _ value: Any, headers: [String: String] = [:]) throws -> HTTPReply {
        try request("PUT", "/preferences/\(key)", headers: headers, json: ["value": value])
    }

    /// `POST /things` with `{"thing": thing}`.
    public func post(thing: String, headers: [String: String] = [:]) throws -> HTTPReply {
        try request("POST", "/things", headers: headers, json: ["thing": thing])
    }

    /// `PUT /things` with `{"things": things}`.
    public func put(things: [String], headers: [String: String] = [:]) throws -> HTTPReply {
        try request("PUT", "/things", headers: headers, json: ["things": things])
    }

    /// `GET /things` → the list.
    public func things(headers: [String: String] = [:]) throws -> [String] {
        try get("/things", headers: headers).value?["things"]?.strings ?? []
    }

    /// The current `Tidings-Revision` (from `GET /healthz`).
    public func currentRevision() throws -> UInt64 {
        try get("/healthz").revisionHeader ?? 0
    }
}
