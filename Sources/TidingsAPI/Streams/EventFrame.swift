import Foundation
import Observing

/// Builds Server-Sent-Events frames. Each event is encoded once, when it is announced, and the
/// same bytes are written to every stream that covers it (and kept for replay).
///
/// JSON from `JSONEncoder` never contains a raw line break (strings escape `\n` and `\r`), so
/// `data:` is always one line and no value can forge a field or an event.
enum EventFrame {
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        return encoder
    }()

    /// `id: <id>`, `event: <name>`, `data: <json>`, blank line.
    static func frame(id: UInt64, event: String, json: String) -> [UInt8] {
        var text = "id: \(id)\nevent: \(event)\ndata: "
        text.reserveCapacity(text.utf8.count + json.utf8.count + 2)
        text += json
        text += "\n\n"
        return Array(text.utf8)
    }

    static func frame(id: UInt64, event: String, data: some Encodable) -> [UInt8] {
        frame(id: id, event: event, json: json(data))
    }

    /// One line of JSON for `value`. Encoding our own plain data types cannot fail.
    static func json(_ value: some Encodable) -> String {
        // JSONEncoder is documented thread-safe for encoding; all callers are on the loop anyway.
        let data = try! encoder.encode(value)
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
