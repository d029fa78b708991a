extension JSONShape {
    /// The longest run of non-starters (combining marks) a JSON body's text may hold: UAX #15's
    /// stream-safe limit.
    public static let maxNonStarterRun = 30

    /// Whether no run of non-starters in `bytes` (JSON text) is longer than
    /// ``maxNonStarterRun``, counting scalars written as `\uXXXX` escapes (surrogate pairs
    /// joined) as well as raw UTF-8. One pass, no allocation.
    ///
    /// Why before any parsing: putting a run of combining marks in canonical order costs time
    /// quadratic in its length, and Swift does it whenever a `String` is hashed (a dictionary
    /// key while JSON is parsed) or compared; a 1 MiB body of alternating marks held a thread
    /// for 40 s. Stream-safe text keeps all of that linear. Bytes that are not UTF-8 or not
    /// JSON count as starters here; the parser refuses them afterwards.
    ///
    /// The same rule for a decoded `String` is Observing's `StreamSafeText` (this module does
    /// not depend on that one).
    public static func isStreamSafe(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer(isStreamSafe)
    }

    private static func isStreamSafe(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var run = 0
        var i = 0
        let n = bytes.count
        while i < n {
            let byte = bytes[i]
            var scalar: UInt32
            if byte < 0x80 {
                i += 1
                if byte == UInt8(ascii: "\\"), i < n {
                    let escaped = bytes[i]
                    i += 1
                    if escaped == UInt8(ascii: "u"), let unit = hex4(bytes, at: i) {
                        i += 4
                        scalar = unit
                        // A high surrogate followed by an escaped low one is one scalar.
                        if (0xD800...0xDBFF).contains(unit), i + 6 <= n, bytes[i] == UInt8(ascii: "\\"),
                           bytes[i + 1] == UInt8(ascii: "u"), let low = hex4(bytes, at: i + 2), (0xDC00...0xDFFF).contains(low) {
                            scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                            i += 6
                        }
                    } else {
                        run = 0
                        continue
                    }
                } else {
                    run = 0
                    continue
                }
            } else {
                (scalar, i) = decodeUTF8(bytes, at: i)
            }
            run = weight(scalar, after: run)
            if run > maxNonStarterRun { return false }
        }
        return true
    }

    /// The run length after `value`: a starter ends it, a non-starter adds one, and the three
    /// Tibetan vowel signs of class 0 whose canonical decomposition is two non-starters add two.
    private static func weight(_ value: UInt32, after run: Int) -> Int {
        if value < 0x300 { return 0 }
        if value == 0x0F73 || value == 0x0F75 || value == 0x0F81 { return run + 2 }
        guard let scalar = Unicode.Scalar(value) else { return 0 }
        return scalar.properties.canonicalCombiningClass.rawValue == 0 ? 0 : run + 1
    }

    /// Four hex digits at `i`, or nil.
    private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> UInt32? {
        guard i + 4 <= bytes.count else { return nil }
        var value: UInt32 = 0
        for k in i..<(i + 4) {
            let b = bytes[k]
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// The scalar whose UTF-8 form starts at `i` (a lead byte ≥ 0x80) and the index after it; a
    /// malformed sequence gives U+0000 (a starter) and moves one byte on.
    private static func decodeUTF8(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> (UInt32, Int) {
        let lead = bytes[i]
        let length: Int
        var value: UInt32
        switch lead {
        case 0xC2...0xDF: length = 2; value = UInt32(lead & 0x1F)
        case 0xE0...0xEF: length = 3; value = UInt32(lead & 0x0F)
        case 0xF0...0xF4: length = 4; value = UInt32(lead & 0x07)
        default: return (0, i + 1)
        }
        guard i + length <= bytes.count else { return (0, i + 1) }
        for k in (i + 1)..<(i + length) {
            let b = bytes[k]
            guard b & 0xC0 == 0x80 else { return (0, i + 1) }
            value = value << 6 | UInt32(b & 0x3F)
        }
        return (value, i + length)
    }
}
