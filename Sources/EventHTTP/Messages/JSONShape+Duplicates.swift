/// Duplicate member names: `{"age": 1, "age": 2}` is JSON that RFC 8259 leaves to the reader
/// ("the names within an object SHOULD be unique"), and readers disagree — Foundation keeps the
/// first, most others the last — so a proxy or audit log may see one value and the server store
/// another. A careful server refuses the body (I-JSON, RFC 7493 §2.3) instead of guessing.
extension JSONShape {
    /// The first member name that occurs twice in one object of `bytes`, or nil. Names are
    /// compared after their escapes are decoded (`"a"` and `"\u0061"` are one name) and as Swift
    /// strings compare (canonically), which is exactly when Foundation's parser would merge them.
    /// One pass, linear in `bytes` apart from hashing names; call it after the body is known to be
    /// JSON and stream-safe (``isStreamSafe(_:)``: hashing long runs of combining marks is quadratic).
    public static func duplicateMemberName(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBufferPointer(duplicateMemberName)
    }

    private struct Level {
        let isObject: Bool
        var expectsName: Bool
        var names: Set<String> = []
    }

    private static func duplicateMemberName(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var levels: [Level] = []
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "{"): levels.append(Level(isObject: true, expectsName: true))
            case UInt8(ascii: "["): levels.append(Level(isObject: false, expectsName: false))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): if !levels.isEmpty { levels.removeLast() }
            case UInt8(ascii: ","): if let last = levels.indices.last, levels[last].isObject { levels[last].expectsName = true }
            case UInt8(ascii: "\""):
                let start = index + 1
                var end = start, escaped = false, hasEscape = false
                while end < bytes.count {
                    let inner = bytes[end]
                    if escaped { escaped = false } else if inner == UInt8(ascii: "\\") { escaped = true; hasEscape = true } else if inner == UInt8(ascii: "\"") { break }
                    end += 1
                }
                if let last = levels.indices.last, levels[last].isObject, levels[last].expectsName {
                    let raw = UnsafeBufferPointer(rebasing: bytes[start..<min(end, bytes.count)])
                    let name = hasEscape ? unescaped(raw) : String(decoding: raw, as: UTF8.self)
                    if !levels[last].names.insert(name).inserted { return name }
                    levels[last].expectsName = false
                }
                index = end
            default: break
            }
            index += 1
        }
        return nil
    }

    /// The text of a JSON string's contents with its escapes decoded (a lone surrogate becomes
    /// U+FFFD; the parser refuses such bodies before this is asked anyway).
    private static func unescaped(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var index = 0
        func hex4(at position: Int) -> UInt32? {
            guard position + 4 <= raw.count else { return nil }
            var value: UInt32 = 0
            for byte in raw[position..<position + 4] {
                guard let digit = hexDigit(byte) else { return nil }
                value = value << 4 | digit
            }
            return value
        }
        func append(_ scalar: UInt32) {
            let scalar = Unicode.Scalar(scalar) ?? "\u{FFFD}"
            out.append(contentsOf: UTF8.encode(scalar)!)
        }
        while index < raw.count {
            let byte = raw[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < raw.count else { out.append(byte); index += 1; continue }
            let kind = raw[index + 1]
            index += 2
            switch kind {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hex4(at: index) else { append(0xFFFD); continue }
                index += 4
                if (0xD800..<0xDC00).contains(unit), index + 6 <= raw.count,
                   raw[index] == UInt8(ascii: "\\"), raw[index + 1] == UInt8(ascii: "u"),
                   let low = hex4(at: index + 2), (0xDC00..<0xE000).contains(low) {
                    index += 6
                    append(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
                } else {
                    append(unit)
                }
            default: out.append(kind)   // \" \\ \/
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexDigit(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }
}
