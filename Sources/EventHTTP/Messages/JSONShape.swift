/// Cheap looks at a JSON body before it is parsed, so a handler can refuse a body whose size
/// in items is out of bounds without paying for decoding it.
public enum JSONShape {
    /// The number of members of the top-level object in `bytes`, counted by one pass over the
    /// bytes (strings skipped, nesting tracked); nil when the body does not start as an object
    /// or is not balanced (then the real decoder reports what is wrong). The scan stops as soon
    /// as the count passes `stopAbove` (returning `stopAbove + 1`), so a flood of members costs
    /// no more than the few the caller allows.
    ///
    /// ```swift
    /// if let count = JSONShape.topLevelMemberCount(request.body, stopAbove: limit), count > limit { throw ... }
    /// ```
    public static func topLevelMemberCount(_ bytes: [UInt8], stopAbove: Int = .max) -> Int? {
        bytes.withUnsafeBufferPointer { scan($0, stopAbove: stopAbove) }
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, stopAbove: Int) -> Int? {
        var depth = 0, members = 0
        var inString = false, escaped = false, sawValue = false, started = false
        for byte in bytes {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                continue
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                if !started {
                    guard byte == UInt8(ascii: "{") else { return nil }
                    started = true
                } else if depth == 1 { sawValue = true }
                depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth < 0 { return nil }
                if depth == 0 { return members + (sawValue ? 1 : 0) }
            case UInt8(ascii: ","):
                if depth == 1 {
                    members += 1
                    if members > stopAbove { return stopAbove + 1 }
                }
            case UInt8(ascii: "\""):
                if !started { return nil }
                inString = true
                if depth == 1 { sawValue = true }
            default:
                if !started { return nil }
                if depth == 1 { sawValue = true }
            }
        }
        return nil
    }
}
