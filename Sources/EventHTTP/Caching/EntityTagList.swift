/// An `If-None-Match` / `If-Match` field value (RFC 9110 §13.1.1–2): `*`, or a list of entity
/// tags, each `"opaque"` or `W/"opaque"`. Commas may appear inside a tag's quotes.
public struct EntityTagList: Equatable, Sendable {
    /// One entity tag of the list.
    public struct Tag: Equatable, Sendable {
        public var weak: Bool
        /// The text between the quotes.
        public var opaque: Substring
    }

    public var isAny: Bool
    public var tags: [Tag]

    /// Parses `value`; members that are not entity tags are skipped (they match nothing).
    public init(_ value: String) {
        let trimmed = Substring(value).trimmingSpaces()
        if trimmed == "*" {
            isAny = true
            tags = []
            return
        }
        isAny = false
        var tags: [Tag] = []
        var rest = trimmed
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            var weak = false
            if rest.hasPrefix("W/") {
                weak = true
                rest = rest.dropFirst(2)
            }
            guard rest.first == "\"" else {
                // Not a tag: skip to the next comma.
                rest = rest.drop { $0 != "," }
                continue
            }
            let body = rest.dropFirst()
            guard let close = body.firstIndex(of: "\"") else { break }
            tags.append(Tag(weak: weak, opaque: body[..<close]))
            rest = body[body.index(after: close)...]
        }
        self.tags = tags
    }

    /// Weak comparison (`If-None-Match`): the opaque texts are equal, weakness ignored.
    public func matchesWeakly(_ etag: String) -> Bool {
        if isAny { return true }
        guard let current = Self.opaque(of: etag) else { return false }
        return tags.contains { $0.opaque == current.opaque }
    }

    /// Strong comparison (`If-Match`): both strong and equal.
    public func matchesStrongly(_ etag: String) -> Bool {
        if isAny { return true }
        guard let current = Self.opaque(of: etag), !current.weak else { return false }
        return tags.contains { !$0.weak && $0.opaque == current.opaque }
    }

    /// A field value's single tag (an `ETag` as the server sends it).
    static func opaque(of etag: String) -> Tag? {
        EntityTagList(etag).tags.first
    }

    /// `etag` for the gzip-coded representation: a different tag, as two representations of
    /// one resource must have (`"5"` → `"5-gzip"`, weakness kept).
    public static func gzipVariant(of etag: String) -> String { variant(of: etag, coding: .gzip) }

    /// `etag` for the representation in `coding`: `"5"` → `"5-gzip"` / `"5-br"`.
    public static func variant(of etag: String, coding: AcceptEncoding.Coding) -> String {
        guard etag.hasSuffix("\"") else { return etag }
        return String(etag.dropLast()) + "-" + coding.rawValue + "\""
    }
}

/// Strong entity tags from content: FNV-1a 64 over the bytes, 16 hex digits (quoted), for
/// answers fixed at start-up (the dashboard, the contract) and answers without a tag of their own.
public enum ContentTag {
    public static func of(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        bytes.withUnsafeBufferPointer { buffer in
            for byte in buffer {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
        }
        let hex = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }
}
