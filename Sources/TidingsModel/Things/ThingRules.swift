import Foundation
import Observing

/// The acronym rules as pure functions, so the server can check a batch of queued writes
/// against a shadow copy before making them durable.
public enum ThingRules {
    /// The longest thing, in Unicode scalars after normalisation (NFC), so combining marks
    /// count: a grapheme-cluster limit would let one "character" carry megabytes.
    public static let maxLength = 64
    /// Trimmed input longer than this many UTF-8 bytes is too long whatever NFC composes (a
    /// scalar is at most 4 bytes and composition merges at most a few scalars into one), so
    /// it is refused before upper-casing and normalising it.
    static let maxRawBytes = maxLength * 4 * 4
    /// The most things a list may hold.
    public static let maxCount = 10_000

    /// Trims whitespace (including newlines) and applies `textCase`. Upper-casing is the
    /// standard library's Unicode full mapping, which does not depend on the locale.
    public static func normalize(_ raw: String, textCase: TextCase) -> String {
        let trimmed = trim(raw)
        let cased: String
        switch textCase {
        case .upper: cased = trimmed.uppercased()
        case .none: cased = trimmed
        }
        // ASCII is its own NFC form; skipping Foundation's normaliser keeps a 10,000-thing list cheap.
        if cased.utf8.allSatisfy({ $0 < 0x80 }) { return cased }
        return cased.precomposedStringWithCanonicalMapping
    }

    /// Without leading and trailing whitespace (including newlines).
    private static func trim(_ raw: String) -> String {
        // Fast path: no ASCII white space at either end (an ASCII byte that is not white space
        // cannot end or start a white-space character).
        if let first = raw.utf8.first, let last = raw.utf8.last, first < 0x80, last < 0x80,
           !isASCIIWhitespace(first), !isASCIIWhitespace(last) {
            return raw
        }
        var scalars = Substring(raw)
        while let first = scalars.first, isTrimmed(first) { scalars.removeFirst() }
        while let last = scalars.last, isTrimmed(last) { scalars.removeLast() }
        return String(scalars)
    }

    /// White space that is trimmed: Unicode's, but not U+0085 (NEL), a control character that
    /// the contract's pattern (ECMAScript `\s`) does not count as white space — it is refused
    /// like any other control character instead of being dropped.
    private static func isTrimmed(_ character: Character) -> Bool {
        character.isWhitespace && character != "\u{85}"
    }

    /// Normalises `raw`, refusing input too long to be a thing before the costly steps.
    public static func normalizeBounded(_ raw: String, textCase: TextCase) throws(ThingError) -> String {
        // Even trimming walks characters (grapheme breaking): refuse the absurd before it.
        if raw.utf8.count > 4 * maxRawBytes {
            throw .tooLong(length: raw.unicodeScalars.count, limit: maxLength)
        }
        let trimmed = trim(raw)
        if trimmed.utf8.count > maxRawBytes {
            throw .tooLong(length: trimmed.unicodeScalars.count, limit: maxLength)
        }
        return normalize(trimmed, textCase: textCase)
    }

    private static func isASCIIWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || (0x09...0x0D).contains(byte) }

    /// Checks an already normalised thing on its own: empty, too long, control characters.
    public static func validateText(_ thing: String) throws(ThingError) {
        if thing.isEmpty { throw .empty }
        if thing.utf8.allSatisfy({ $0 < 0x80 }) {
            // ASCII: Cc is 0x00-0x1F and 0x7F, and each byte is one scalar (no Unicode tables
            // per scalar, which dominated a 10,000-thing PUT).
            if thing.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) { throw .controlCharacters }
            if thing.utf8.count > maxLength { throw .tooLong(length: thing.utf8.count, limit: maxLength) }
            return
        }
        if thing.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw .controlCharacters
        }
        let length = thing.unicodeScalars.count
        if length > maxLength { throw .tooLong(length: length, limit: maxLength) }
        if !StreamSafeText.isStreamSafe(thing) { throw .tooManyCombiningMarks }
    }

    /// Normalises `raw` and checks it can be added to `existing` (normalised things). Returns
    /// the normalised thing. Pass a `Set` for large lists: membership is then O(1).
    public static func validateAdd(_ raw: String, to existing: some Collection<String>, textCase: TextCase) throws(ThingError) -> String {
        let thing = try normalizeBounded(raw, textCase: textCase)
        try validateText(thing)
        if existing.contains(thing) { throw .duplicate(thing) }
        if existing.count >= maxCount { throw .tooMany(limit: maxCount) }
        return thing
    }

    /// Normalises and checks a whole replacement list; duplicates after normalisation are
    /// refused. Returns the normalised list in the given order.
    public static func validateList(_ raws: [String], textCase: TextCase) throws(ThingError) -> [String] {
        if raws.count > maxCount { throw .tooMany(limit: maxCount) }
        var seen = Set<String>()
        var result: [String] = []
        result.reserveCapacity(raws.count)
        for raw in raws {
            let thing = try normalizeBounded(raw, textCase: textCase)
            try validateText(thing)
            guard seen.insert(thing).inserted else { throw .duplicate(thing) }
            result.append(thing)
        }
        return result
    }
}
