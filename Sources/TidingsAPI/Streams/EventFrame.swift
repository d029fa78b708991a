import EventHTTP
import Foundation
import Observing

/// The application's Server-Sent-Events frames: `id:` a revision, `event:` a name, `data:` one
/// line of JSON. Each event is encoded once, when it is announced, and the same bytes are
/// written to every stream that covers it (and kept for replay). The framing itself is
/// EventHTTP's ``ServerSentEvent``; the JSON is ``JSONCoding``'s.
enum EventFrame {
    /// `id: <id>`, `event: <name>`, `data: <json>`, blank line.
    static func frame(id: UInt64, event: String, json: String) -> [UInt8] {
        ServerSentEvent(id: String(id), event: event, data: json).encoded
    }

    static func frame(id: UInt64, event: String, data: some Encodable) -> [UInt8] {
        frame(id: id, event: event, json: json(data))
    }

    /// One line of JSON for `value` (compact, keys sorted; `JSONEncoder` escapes every line
    /// break inside strings, so `data:` stays one line). Encoding our own plain data types
    /// cannot fail: they hold no non-finite numbers (declarations refuse them).
    static func json(_ value: some Encodable) -> String {
        let data = try! JSONCoding.encoder.encode(value)
        return String(decoding: data, as: UTF8.self)
    }
}

/// `data` of a `preference` event.
struct PreferenceEventData: Encodable {
    let key: String
    let value: PreferenceValue
    let revision: UInt64
}

/// `data` of a `things` event.
struct ThingsEventData: Encodable {
    struct Change: Encodable {
        let op: String
        let thing: String?
    }

    let things: [String]
    let revision: UInt64
    /// What happened; absent in a snapshot.
    let change: Change?
}

/// `data` of a `reset` event.
struct ResetEventData: Encodable {
    let reason: String
}
