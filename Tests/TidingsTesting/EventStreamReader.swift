import Foundation
public import TestFixtures

/// Settings every stream a test opens through `openEventStream` follows (XCTest runs one test
/// at a time): `acceptEncoding` is sent unless the test names its own (`GzipStreamsTests` runs
/// every stream test again over gzip).
public enum StreamTestSettings {
    nonisolated(unsafe) public static var acceptEncoding: String?
}

/// An event stream opened on an `HTTPConnection` (the live transport), decoding chunked
/// transfer, gzip (a real decoder fed the bytes as they arrive) and SSE framing.
///
/// ```swift
/// let stream = try server.openEventStream("/preferences/events")
/// XCTAssertEqual(stream.reply.status, 200)
/// let event = try stream.nextEvent()        // skips retry and comments
/// XCTAssertEqual(event.name, "preference")
/// ```
public final class EventStreamReader: EventStreamReading {
    public typealias Event = StreamEvent

    public let connection: HTTPConnection
    /// The response head (status, headers).
    public let reply: HTTPReply
    private var parser = ServerSentEventParser()
    private var ended = false
    private var queued: [StreamMessage] = []
    /// The gzip decoder when the response is `Content-Encoding: gzip`.
    private let decoder: GzipDecoder?
    /// Body bytes received (compressed ones on a gzip stream), transfer framing excluded.
    public private(set) var bodyBytes = 0

    public init(connection: HTTPConnection, reply: HTTPReply) {
        self.connection = connection
        self.reply = reply
        decoder = reply.header("Content-Encoding")?.lowercased() == "gzip" ? GzipDecoder() : nil
    }

    /// Whether the stream is gzip-coded.
    public var isGzip: Bool { decoder != nil }
    /// On a gzip stream: whether the member ended with a trailer whose CRC-32 and length zlib
    /// checked against everything decoded.
    public var gzipMemberComplete: Bool { decoder?.finished ?? false }

    /// Whether the server ended the stream (terminating chunk or close).
    public var isEnded: Bool { ended && queued.isEmpty }

    /// The next message of any kind; throws `HTTPConnectionError.timeout` / `.closed`.
    public func nextMessage(timeout: Double = 5) throws -> StreamMessage {
        connection.setTimeout(timeout)
        while queued.isEmpty {
            guard !ended else { throw HTTPConnectionError.closed }
            try readMore()
        }
        return queued.removeFirst()
    }

    private func readMore() throws {
        let chunked = reply.header("Transfer-Encoding")?.lowercased() == "chunked"
        do {
            let bytes: [UInt8]
            if chunked {
                guard let chunk = try connection.readChunk() else { ended = true; return }
                bytes = chunk
            } else {
                bytes = try connection.readAnything()
            }
            bodyBytes += bytes.count
            queued += parser.feed(try decoder?.feed(bytes) ?? bytes)
        } catch HTTPConnectionError.closed {
            ended = true
        }
    }
}

extension HTTPConnection {
    /// Opens an event stream: sends the GET and reads the response head.
    public func openEventStream(_ target: String, headers: [String: String] = [:]) throws -> EventStreamReader {
        var headers = headers
        if headers["Accept"] == nil { headers["Accept"] = "text/event-stream" }
        if headers["Accept-Encoding"] == nil, let coding = StreamTestSettings.acceptEncoding { headers["Accept-Encoding"] = coding }
        send("GET", target, headers: headers)
        return EventStreamReader(connection: self, reply: try readHead())
    }
}

/// The live transport: the real binary (``TidingsProcess``, TestFixtures' one launcher) over
/// loopback HTTP (``HTTPConnection``, its one socket client), each request on a fresh connection.
extension TidingsProcess: TidingsTransport {
    /// Opens an event stream on a fresh connection.
    public func openEventStream(_ target: String, headers: [String: String] = [:]) throws -> EventStreamReader {
        try connect().openEventStream(target, headers: headers)
    }
}
