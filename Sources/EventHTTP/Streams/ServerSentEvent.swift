import Foundation

/// Encodes Server-Sent-Events frames once, as bytes that many streams can share.
///
/// ```swift
/// let frame = ServerSentEvent(id: "42", event: "preference", data: #"{"key":"age"}"#).encoded
/// for stream in subscribers { stream.send(frame) }
/// ```
/// Fields never contain a line break: CR and LF inside `id`, `event` or `data` are escaped as
/// the JSON escapes `\r` / `\n`, so a value can never end the event early or forge another one.
/// (JSON data produced by an encoder has no raw line breaks, so it passes unchanged.)
public struct ServerSentEvent: Sendable, Equatable {
    public var id: String?
    public var event: String?
    public var data: String

    public init(id: String? = nil, event: String? = nil, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }

    /// `id: …\nevent: …\ndata: …\n\n` as UTF-8.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.utf8.count + 48)
        if let id {
            out += "id: ".utf8
            Self.appendSingleLine(id, to: &out)
            out.append(10)
        }
        if let event {
            out += "event: ".utf8
            Self.appendSingleLine(event, to: &out)
            out.append(10)
        }
        out += "data: ".utf8
        Self.appendSingleLine(data, to: &out)
        out += [10, 10]
        return out
    }

    /// A comment line (`: text\n\n`); clients ignore it, proxies see traffic.
    public static func comment(_ text: String) -> [UInt8] {
        var out: [UInt8] = Array(": ".utf8)
        appendSingleLine(text, to: &out)
        out += [10, 10]
        return out
    }

    /// Most bytes of padding `padding(bytes:)` makes (`--stream-padding` is at most this).
    public static let maxPadding = 8 << 10

    /// A comment line of exactly `bytes` bytes (at least 2: `:` and the line end; at most
    /// `maxPadding`), which clients ignore: for proxies that hold a response's first bytes
    /// before they pass any on.
    public static func padding(bytes: Int) -> [UInt8] {
        let total = min(maxPadding, max(2, bytes))
        return [UInt8(ascii: ":")] + [UInt8](repeating: UInt8(ascii: " "), count: total - 2) + [10]
    }

    /// Whether `frame` is a `padding(bytes:)` comment (`:`, spaces, a line end).
    static func isPadding(_ frame: [UInt8]) -> Bool {
        guard frame.count >= 2, frame[0] == UInt8(ascii: ":"), frame[frame.count - 1] == 10 else { return false }
        return frame[1..<(frame.count - 1)].allSatisfy { $0 == UInt8(ascii: " ") }
    }

    /// A `retry:` field telling the client how long to wait before reconnecting.
    public static func retry(milliseconds: Int) -> [UInt8] {
        Array("retry: \(max(0, milliseconds))\n\n".utf8)
    }

    static func appendSingleLine(_ text: String, to out: inout [UInt8]) {
        // Nearly every field (JSON from an encoder) has nothing to escape: copy it whole. memchr
        // is vectorised, so three scans cost less than one byte-by-byte loop (60 kB: 7 µs, not 490).
        let copied: Bool? = text.utf8.withContiguousStorageIfAvailable { bytes in
            if let base = bytes.baseAddress, !bytes.isEmpty,
               memchr(base, 10, bytes.count) != nil || memchr(base, 13, bytes.count) != nil
                || memchr(base, 0, bytes.count) != nil { return false }
            out.append(contentsOf: bytes)
            return true
        }
        if copied == true { return }
        for byte in text.utf8 {
            switch byte {
            case 10: out += [92, 110]      // \n
            case 13: out += [92, 114]      // \r
            case 0: out += Array("\\u0000".utf8)
            default: out.append(byte)
            }
        }
    }
}
