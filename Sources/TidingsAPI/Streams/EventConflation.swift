import EventHTTP

/// `?conflate=true` on a stream (openapi.yaml "Conflation"): which queued events a newer one may
/// replace while the client is behind. One key per preference, one for `things`, one for
/// `posts`; `reset` and anything else is never replaced.
enum EventConflation {
    /// Whether the request asks for conflation (`true`/`false`; anything else is a 400).
    static func requested(_ request: Request) throws(ProblemDetails) -> Bool {
        switch request.query("conflate") {
        case nil, "false": return false
        case "true": return true
        default: throw Problems.badQuery("'conflate' must be true or false.")
        }
    }

    /// The conflation key of an encoded frame (`id: …\nevent: <name>\ndata: <json>\n\n`), read
    /// from its bytes so the stream code needs no change: `preference:<key>` (the key is the
    /// first member of the sorted-keys JSON), `things`, `posts`; nil otherwise.
    static func key(of frame: [UInt8]) -> String? {
        guard let event = field("event: ", in: frame) else { return nil }
        switch event {
        case "things", "posts":
            return event
        case "preference":
            guard let data = field("data: ", in: frame) else { return nil }
            let prefix = #"{"key":""#
            guard data.hasPrefix(prefix) else { return nil }
            let rest = data.utf8.dropFirst(prefix.utf8.count)
            // Declared keys never contain a quote or a backslash, so the first quote ends it.
            guard let end = rest.firstIndex(of: UInt8(ascii: "\"")),
                  !rest[..<end].contains(UInt8(ascii: "\\")) else { return nil }
            return "preference:" + String(decoding: rest[..<end], as: UTF8.self)
        default:
            return nil
        }
    }

    /// The value of the first line starting with `name` (bounded: event and key come first).
    private static func field(_ name: String, in frame: [UInt8]) -> String? {
        let marker = Array(name.utf8)
        var lineStart = 0
        while lineStart < frame.count {
            let lineEnd = frame[lineStart...].firstIndex(of: 10) ?? frame.count
            if lineEnd - lineStart >= marker.count, frame[lineStart..<(lineStart + marker.count)].elementsEqual(marker) {
                // Only the head of a data line is needed; a posts snapshot may be megabytes.
                let valueEnd = min(lineEnd, lineStart + marker.count + 512)
                return String(decoding: frame[(lineStart + marker.count)..<valueEnd], as: UTF8.self)
            }
            lineStart = lineEnd + 1
        }
        return nil
    }
}
