import Foundation
import Observing

/// What a stored posts document (a `GET /posts` object, see ``PostsStateBody``) says about
/// itself, read from its ends without parsing it: the fetch time near the front, the source
/// near the back. A stored document can be 8 MiB of posts; parsing it costs the loop hundreds
/// of milliseconds, so an instance first looks whether it needs it at all.
///
/// The members are in a fixed order: `{"error":…,"fetchedAt":…,"fetchedWith"?:…,"posts":[…],"source":…,"state":…}`.
/// The first `"fetchedAt":"` is the top-level one (only the error comes before it, and its
/// strings escape every quote); the source member is the last `,"source":` before the state.
enum StoredPostsPeek {
    /// How far into the document the fetch time may start (after an error message).
    private static let frontBytes = 16 << 10

    /// The document's `fetchedAt`, parsed; nil when it has none (or is not a stored document).
    static func fetchedAt(_ document: String) -> Date? {
        fetchedAtText(document).flatMap { try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse($0) }
    }

    /// The document's `fetchedAt` as written (RFC 3339 with milliseconds); nil when it has none.
    static func fetchedAtText(_ document: String) -> String? {
        let marker = Array(#""fetchedAt":""#.utf8)
        let bytes = Array(document.utf8.prefix(frontBytes))
        guard let start = firstIndex(of: marker, in: bytes[...]) else { return nil }
        let valueStart = start + marker.count
        guard let end = bytes[valueStart...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: bytes[valueStart..<end], as: UTF8.self)
    }

    /// The upstream's validators of the document's posts (its `fetchedWith`); nil when it has
    /// none (a document stored before they were kept, or an upstream that sends none).
    static func validators(_ document: String) -> Validators? {
        struct Member: Decodable {
            let etag: String?
            let lastModified: String?
        }
        let marker = Array(#","fetchedWith":"#.utf8), end = Array(#","posts":"#.utf8)
        let bytes = Array(document.utf8.prefix(frontBytes))
        // Only the error and the fetch time come before it (their strings escape every quote).
        guard let start = firstIndex(of: marker, in: bytes[...]),
              let stop = firstIndex(of: end, in: bytes[(start + marker.count)...]),
              let member = try? JSONDecoder().decode(Member.self, from: Data(bytes[(start + marker.count)..<stop]))
        else { return nil }
        let validators = Validators(etag: member.etag, lastModified: member.lastModified)
        return validators.isEmpty ? nil : validators
    }

    /// Whether the document was fetched from `source` (its `source` member is exactly that URL).
    static func isFrom(_ source: String, _ document: String) -> Bool {
        let member = Array((#","source":"# + EventFrame.json(source) + #","state":""#).utf8)
        // Only the state's short name and the closing brace follow the source.
        let tail = Array(document.utf8.suffix(member.count + 32))
        return firstIndex(of: member, in: tail[...]) != nil
    }

    /// Where the posts array lies in the document: after the first `"posts":` (it follows the
    /// fetch time), up to the last `,"source":` (only the source URL, escaped, and the state
    /// follow it). nil when the document is not a stored posts document.
    static func postsRange(_ document: String) -> Range<Int>? {
        let bytes = document.utf8
        let front = Array(bytes.prefix(frontBytes))
        let member = Array(#""posts":"#.utf8)
        guard let start = firstIndex(of: member, in: front[...]) else { return nil }
        // The tail: the source URL (bounded like any URL we accept) and the state.
        let tailCount = min(bytes.count, 16 << 10)
        let tail = Array(bytes.suffix(tailCount))
        guard let sourceInTail = lastIndex(of: Array(#","source":"#.utf8), in: tail[...]) else { return nil }
        let lower = start + member.count, upper = bytes.count - tailCount + sourceInTail
        return lower <= upper ? lower..<upper : nil
    }

    /// Where `needle` first starts in `haystack` (an index of `haystack`'s base).
    static func firstIndex(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
        var index = haystack.startIndex
        while index + needle.count <= haystack.endIndex {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// Where `needle` last starts in `haystack` (an index of `haystack`'s base).
    static func lastIndex(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
        var index = haystack.endIndex - needle.count
        while index >= haystack.startIndex {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index -= 1
        }
        return nil
    }
}
