import Foundation
public import TestFixtures

/// A message read from a Server-Sent-Events stream.
public enum StreamMessage: Equatable, Sendable {
    /// An event: `id`, `event` name and `data` (lines joined by `\n`).
    case event(id: String?, event: String?, data: String)
    /// A `: comment` line (e.g. the heartbeat `keep-alive`).
    case comment(String)
    /// A `retry:` value in milliseconds.
    case retry(Int)
}

/// One event of a stream.
public struct StreamEvent: Equatable, Sendable, CustomStringConvertible {
    public var id: String?
    public var name: String?
    public var data: String

    public init(id: String?, name: String?, data: String) {
        self.id = id
        self.name = name
        self.data = data
    }

    /// `data` as a ``JSONValue`` (compare it as a value, not as text).
    public var value: JSONValue? { JSONValue.parse(Array(data.utf8)) }
    /// `data` parsed as a JSON object.
    public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(data.utf8))) as? [String: Any] }
    public var description: String { "id: \(id ?? "-") event: \(name ?? "-") data: \(data)" }
}

/// Splits SSE bytes into messages: blocks end at a blank line; `:` lines are comments,
/// `retry:` a reconnection delay, `id`/`event`/`data` make an event (data lines joined by `\n`).
public struct ServerSentEventParser: Sendable {
    private var pending: [UInt8] = []

    public init() {}

    /// Adds `bytes` and returns the messages they complete.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [StreamMessage] {
        pending += bytes
        var messages: [StreamMessage] = []
        while let end = blockEnd() {
            let block = String(decoding: pending[..<end.start], as: UTF8.self)
            pending.removeFirst(end.end)
            var id: String?, name: String?, data: [String] = [], sawData = false
            for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
                if line.hasPrefix(":") {
                    messages.append(.comment(line.dropFirst().trimmingCharacters(in: .whitespaces)))
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
                case "retry": if let ms = Int(value) { messages.append(.retry(ms)) }
                default: break
                }
            }
            if sawData { messages.append(.event(id: id, event: name, data: data.joined(separator: "\n"))) }
        }
        return messages
    }

    private func blockEnd() -> (start: Int, end: Int)? {
        guard pending.count >= 2 else { return nil }
        for index in 0..<(pending.count - 1) where pending[index] == 10 && pending[index + 1] == 10 {
            return (index, index + 2)
        }
        return nil
    }
}

/// An open event stream, whichever transport carries it (see ``TidingsTransport``).
public protocol EventStreamReading: AnyObject {
    /// The response head (status, headers; no body).
    var reply: HTTPReply { get }
    /// Whether the server ended the stream and every message was read.
    var isEnded: Bool { get }
    /// The next message of any kind; throws ``HTTPConnectionError/timeout`` when none came within
    /// `timeout` seconds, ``HTTPConnectionError/closed`` once the stream ended.
    func nextMessage(timeout: Double) throws -> StreamMessage
}

extension EventStreamReading {
    /// The next message within 5 s.
    public func nextMessage() throws -> StreamMessage { try nextMessage(timeout: 5) }

    /// The next event, skipping comments and `retry:`.
    public func nextEvent(timeout: Double = 5) throws -> StreamEvent {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw HTTPConnectionError.timeout }
            if case .event(let id, let name, let data) = try nextMessage(timeout: remaining) {
                return StreamEvent(id: id, name: name, data: data)
            }
        }
    }

    /// The next `count` events (comments and `retry:` skipped), all within `timeout`.
    public func nextEvents(_ count: Int, timeout: Double = 5) throws -> [StreamEvent] {
        let deadline = Date().addingTimeInterval(timeout)
        var events: [StreamEvent] = []
        while events.count < count {
            events.append(try nextEvent(timeout: max(0.01, deadline.timeIntervalSinceNow)))
        }
        return events
    }

    /// Reads events up to and including the first for which `isLast` holds, and returns them
    /// all: the way to prove something did *not* arrive. Make a change that must not reach the
    /// stream, then one that must; read until the second, and assert the first is not among
    /// what came before it (the stream's order makes that the whole story, with no sleep).
    public func events(until isLast: (StreamEvent) -> Bool, timeout: Double = 5) throws -> [StreamEvent] {
        let deadline = Date().addingTimeInterval(timeout)
        var events: [StreamEvent] = []
        while true {
            let event = try nextEvent(timeout: max(0.01, deadline.timeIntervalSinceNow))
            events.append(event)
            if isLast(event) { return events }
        }
    }

    /// Reads until the server ends the stream; returns the messages seen meanwhile.
    public func readToEnd(timeout: Double = 5) throws -> [StreamMessage] {
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
}
