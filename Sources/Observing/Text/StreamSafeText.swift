/// Unicode's stream-safe text format (UAX #15 §13): no more than 30 non-starters (combining
/// marks, canonical combining class ≠ 0) in a row.
///
/// Why it is a rule here: putting a run of combining marks in canonical order costs time
/// quadratic in the run's length, and every canonical operation on a `String` does it —
/// NFC, `==` between unequal byte sequences, and hashing (a `Set`, a `Dictionary` key). A
/// 65,536-scalar value of alternating marks makes each of those take about a second. Text
/// that is stream-safe keeps every run at most 30 long, so all of them stay linear. Real
/// text never comes close (the longest run in any language is a handful of marks).
///
/// ```swift
/// if !StreamSafeText.isStreamSafe(value) { refuse(...) }
/// ```
public enum StreamSafeText {
    /// The longest run of non-starters allowed (UAX #15's stream-safe limit).
    public static let maxNonStarterRun = 30

    /// Whether no run of non-starters in `text` is longer than ``maxNonStarterRun``. Linear, and
    /// free for scalars below U+0300 (no scalar there is a non-starter).
    public static func isStreamSafe(_ text: String) -> Bool {
        var run = NonStarterRun()
        for scalar in text.unicodeScalars where !run.append(scalar) { return false }
        return true
    }
}

/// The length of the current run of non-starters while scalars are appended one by one.
public struct NonStarterRun: Sendable {
    public private(set) var length = 0

    public init() {}

    /// Adds `scalar`; false once the run is longer than ``StreamSafeText/maxNonStarterRun``.
    public mutating func append(_ scalar: Unicode.Scalar) -> Bool {
        length = Self.weight(scalar, after: length)
        return length <= StreamSafeText.maxNonStarterRun
    }

    /// The run length after `scalar`. A starter ends the run; a non-starter adds one; the three
    /// Tibetan vowel signs whose combining class is 0 but whose canonical decomposition is two
    /// non-starters (U+0F73, U+0F75, U+0F81) add two, as UAX #15 counts them.
    static func weight(_ scalar: Unicode.Scalar, after run: Int) -> Int {
        let value = scalar.value
        if value < 0x300 { return 0 }
        if value == 0x0F73 || value == 0x0F75 || value == 0x0F81 { return run + 2 }
        return scalar.properties.canonicalCombiningClass.rawValue == 0 ? 0 : run + 1
    }
}
