/// An incremental `text/event-stream` parser that follows the WHATWG HTML rules
/// (§ 9.2.6 "Interpreting an event stream"), fed bytes in chunks of any size.
///
/// - Lines end with CRLF, LF or CR; a CR at the end of one chunk and an LF at the start of the
///   next are one line end.
/// - One leading U+FEFF (byte order mark) is skipped at the start of the stream.
/// - `:` starts a comment; `field: value` (one space after the colon dropped); a line without
///   a colon is a field with an empty value.
/// - `data` lines accumulate joined with `\n`; an empty line dispatches the event (none when
///   no data arrived); `event` names it; `id` sets the last event ID unless it contains NUL;
///   `retry` with only ASCII digits sets ``retry``; other fields are ignored.
/// - Bytes that are not UTF-8 decode to U+FFFD; an event not ended by an empty line when the
///   stream ends is dropped.
///
/// Memory is bounded: a line longer than ``maxLineBytes`` or an event whose data passes
/// ``maxEventBytes`` throws ``ServerSentEventParser/TooLarge`` (the caller drops the connection).
///
/// ```swift
/// var parser = ServerSentEventParser()
/// for event in try parser.feed(chunk) { print(event.type, event.data) }
/// ```
public struct ServerSentEventParser: Sendable {
    /// Thrown when a line or an event outgrows its bound.
    public struct TooLarge: Error, Sendable, CustomStringConvertible {
        public let limit: Int
        public var description: String { "an event-stream line or event is larger than \(limit) bytes" }
    }

    public let maxLineBytes: Int
    public let maxEventBytes: Int
    /// The last `retry:` value, in milliseconds (nil until the stream sent one).
    public private(set) var retry: Int?
    /// The last event ID buffer: what a reconnect sends as `Last-Event-ID`.
    public private(set) var lastEventID = ""

    private var line: [UInt8] = []
    private var sawCR = false
    private var atStreamStart = true
    private var data: [UInt8] = []
    private var hasData = false
    private var eventType = ""

    public init(maxLineBytes: Int = 1 << 20, maxEventBytes: Int = 4 << 20) {
        self.maxLineBytes = maxLineBytes
        self.maxEventBytes = maxEventBytes
    }

    /// Parses `bytes` and returns the events they complete, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(TooLarge) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            switch byte {
            case 0x0A where sawCR:
                // The LF of a CRLF whose CR already ended the line.
                sawCR = false
            case 0x0A, 0x0D:
                sawCR = byte == 0x0D
                if let event = try endLine() { events.append(event) }
            default:
                sawCR = false
                guard line.count < maxLineBytes else { throw TooLarge(limit: maxLineBytes) }
                line.append(byte)
            }
        }
        return events
    }

    /// Forgets the event being assembled (the connection ended); keeps ``lastEventID`` and
    /// ``retry``, as a reconnecting `EventSource` does. The next bytes start a new stream.
    public mutating func endOfStream() {
        line.removeAll(keepingCapacity: true)
        data.removeAll(keepingCapacity: true)
        hasData = false
        eventType = ""
        sawCR = false
        atStreamStart = true
    }

    private mutating func endLine() throws(TooLarge) -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        var start = 0
        if atStreamStart {
            atStreamStart = false
            if line.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        }
        let content = line[start...]
        if content.isEmpty { return dispatch() }
        if content.first == UInt8(ascii: ":") { return nil }
        let field: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = content.firstIndex(of: UInt8(ascii: ":")) {
            field = content[..<colon]
            value = content[(colon + 1)...]
            if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        } else {
            field = content
            value = []
        }
        switch String(decoding: field, as: UTF8.self) {
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        case "data":
            guard data.count + value.count + 1 <= maxEventBytes else { throw TooLarge(limit: maxEventBytes) }
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case "id":
            if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
        case "retry":
            // Only ASCII digits count; a value too large for Int is ignored like any other bad one.
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
               let milliseconds = Int(String(decoding: value, as: UTF8.self)) {
                retry = milliseconds
            }
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            eventType = ""
        }
        guard hasData else { return nil }
        return ServerSentEvent(
            type: eventType.isEmpty ? "message" : eventType,
            data: String(decoding: data, as: UTF8.self),
            lastEventID: lastEventID)
    }
}
