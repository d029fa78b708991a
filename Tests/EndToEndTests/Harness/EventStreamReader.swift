import Foundation
import TestFixtures

/// A message read from a Server-Sent-Events stream.
enum StreamMessage: Equatable {
    /// An event: `id`, `event` name and `data` (lines joined by `\n`).
    case event(id: String?, event: String?, data: String)
    /// A `: comment` line (e.g. the heartbeat `keep-alive`).
    case comment(String)
    /// A `retry:` value in milliseconds.
    case retry(Int)
}

/// Settings every stream a test opens through `openEventStream` follows (XCTest runs one test
/// at a time): `acceptEncoding` is sent unless the test names its own (`GzipStreamsTests` runs
/// every stream test again over gzip).
enum StreamTestSettings {
    nonisolated(unsafe) static var acceptEncoding: String?
}

/// An event stream opened on an `HTTPConnection`, decoding chunked transfer, gzip (a real
/// decoder fed the bytes as they arrive) and SSE framing.
///
/// ```swift
/// let stream = try server.openEventStream("/preferences/events")
/// XCTAssertEqual(stream.reply.status, 200)
/// let event = try stream.nextEvent()        // skips retry and comments
/// XCTAssertEqual(event.name, "preference")
/// ```
final class EventStreamReader {
    struct Event: Equatable {
        var id: String?
        var name: String?
        var data: String
        /// `data` parsed as a JSON object.
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] }
        static func == (a: Event, b: Event) -> Bool { a.id == b.id && a.name == b.name && a.data == b.data }
    }

    let connection: HTTPConnection
    /// The response head (status, headers).
    let reply: HTTPReply
    private var pending: [UInt8] = []
    private var ended = false
    private var queued: [StreamMessage] = []
    /// The gzip decoder when the response is `Content-Encoding: gzip`.
    private let decoder: GzipDecoder?
    /// Body bytes received (compressed ones on a gzip stream), transfer framing excluded.
    private(set) var bodyBytes = 0

    init(connection: HTTPConnection, reply: HTTPReply) {
        self.connection = connection
        self.reply = reply
        decoder = reply.header("Content-Encoding")?.lowercased() == "gzip" ? GzipDecoder() : nil
    }

    /// Whether the stream is gzip-coded.
    var isGzip: Bool { decoder != nil }
    /// On a gzip stream: whether the member ended with a trailer whose CRC-32 and length zlib
    /// checked against everything decoded.
    var gzipMemberComplete: Bool { decoder?.finished ?? false }

    /// Whether the server ended the stream (terminating chunk or close).
    var isEnded: Bool { ended && queued.isEmpty }

    /// The next message of any kind; throws `HTTPConnectionError.timeout` / `.closed`.
    func nextMessage(timeout: Double = 5) throws -> StreamMessage {
        connection.setTimeout(timeout)
        while queued.isEmpty {
            guard !ended else { throw HTTPConnectionError.closed }
            try readMore()
        }
        return queued.removeFirst()
    }

    /// The next event, skipping comments and `retry:`.
    func nextEvent(timeout: Double = 5) throws -> Event {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw HTTPConnectionError.timeout }
            if case .event(let id, let name, let data) = try nextMessage(timeout: remaining) {
                return Event(id: id, name: name, data: data)
            }
        }
    }

    /// Reads until the server ends the stream; returns the messages seen meanwhile.
    func readToEnd(timeout: Double = 5) throws -> [StreamMessage] {
        var messages: [StreamMessage] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            do {
                messages.append(try nextMessage(timeout: max(0.01, deadline.timeIntervalSinceNow)))
            } catch HTTPConnectionError.closed {
                return messages
            }
        }
    }

    private func readMore() throws {
        let chunked = reply.header("Transfer-Encoding")?.lowercased() == "chunked"
        do {
            let bytes: [UInt8]
            if chunked {
                guard let chunk = try connection.readChunk() else { ended = true; parse(); return }
                bytes = chunk
            } else {
                bytes = try connection.readAnything()
            }
            bodyBytes += bytes.count
            pending += try decoder?.feed(bytes) ?? bytes
        } catch HTTPConnectionError.closed {
            ended = true
        }
        parse()
    }

    /// Splits complete blocks (ending in a blank line) into messages.
    private func parse() {
        while let end = blockEnd() {
            let block = String(decoding: pending[..<end.start], as: UTF8.self)
            pending.removeFirst(end.end)
            var id: String?, name: String?, data: [String] = [], sawData = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") {
                    queued.append(.comment(line.dropFirst().trimmingCharacters(in: .whitespaces)))
                    continue
                }
                let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                let field = String(parts[0])
                var value = parts.count > 1 ? String(parts[1]) : ""
                if value.hasPrefix(" ") { value.removeFirst() }
                switch field {
                case "id": id = value
                case "event": name = value
                case "data": data.append(value); sawData = true
                case "retry": if let ms = Int(value) { queued.append(.retry(ms)) }
                default: break
                }
            }
            if sawData { queued.append(.event(id: id, event: name, data: data.joined(separator: "\n"))) }
        }
    }

    private func blockEnd() -> (start: Int, end: Int)? {
        guard pending.count >= 2 else { return nil }
        for index in 0..<(pending.count - 1) where pending[index] == 10 && pending[index + 1] == 10 {
            return (index, index + 2)
        }
        return nil
    }
}

extension HTTPConnection {
    /// Opens an event stream: sends the GET and reads the response head.
    func openEventStream(_ target: String, headers: [String: String] = [:]) throws -> EventStreamReader {
        var headers = headers
        if headers["Accept"] == nil { headers["Accept"] = "text/event-stream" }
        if headers["Accept-Encoding"] == nil, let coding = StreamTestSettings.acceptEncoding { headers["Accept-Encoding"] = coding }
        send("GET", target, headers: headers)
        return EventStreamReader(connection: self, reply: try readHead())
    }
}

extension TidingsProcess {
    /// Opens an event stream on a fresh connection.
    func openEventStream(_ target: String, headers: [String: String] = [:]) throws -> EventStreamReader {
        try connect().openEventStream(target, headers: headers)
    }
}
