/// What every store refuses before it queues a write, so SQLite and PostgreSQL accept and
/// return the same values (the `ChangeStore` conformance suite holds them to it):
///
/// - A preference's value must be one JSON value (RFC 8259 text; strings escape their control
///   characters, so `"\u0000"` is a fine value: it is stored as those six characters and comes
///   back unchanged) → otherwise ``StoreError/invalidJSON(key:)``.
/// - No text of a write (key, value, default, thing, posts document, actor, reason, `If-Match`
///   key) may hold a raw U+0000: PostgreSQL's `text` cannot, so no store does →
///   ``StoreError/unstorableText(_:)``.
///
/// The API never sends either (it encodes values itself and refuses control characters in
/// things and reasons with 422); this keeps the stores from drifting apart underneath it.
extension StoreWrite {
    /// Why no store can take this write, or nil.
    public var unstorableReason: StoreError? {
        // A write without operations stores nothing (every store answers `[]`).
        if operations.isEmpty { return nil }
        for operation in operations {
            switch operation {
            case let .setPreference(key, json, defaultJSON):
                if Self.hasNUL(key) { return .unstorableText("a preference key") }
                if let json, !StoredJSON.isValid(json) { return .invalidJSON(key: key) }
                if Self.hasNUL(defaultJSON) { return .unstorableText("the default of \(key)") }
            case let .addThing(thing), let .removeThing(thing):
                if Self.hasNUL(thing) { return .unstorableText("a thing") }
            case let .replaceThings(things):
                if things.contains(where: Self.hasNUL) { return .unstorableText("a thing") }
            case let .setPosts(document):
                if Self.hasNUL(document) { return .unstorableText("the posts document") }
            case let .createEnvironment(copiedFrom, _):
                if Self.hasNUL(copiedFrom ?? "") { return .unstorableText("the environment copied from") }
            case .deleteEnvironment:
                break
            }
        }
        if !EnvironmentName.isValid(environment) { return .unknownEnvironment(String(environment.prefix(64))) }
        if expectedRevisions.keys.contains(where: Self.hasNUL) { return .unstorableText("an If-Match key") }
        if Self.hasNUL(actor) { return .unstorableText("the actor") }
        if Self.hasNUL(reason ?? "") { return .unstorableText("the reason") }
        return nil
    }

    private static func hasNUL(_ text: String) -> Bool { text.utf8.contains(0) }
}

/// A strict RFC 8259 check of JSON text: one value, optional white space around it, strings
/// without raw control characters, numbers without leading zeros. One pass over the UTF-8 bytes,
/// nothing allocated. Nesting deeper than ``maxDepth`` is refused (SQLite's `json_valid` stops
/// at 2,000 levels; a preference value is a scalar anyway).
enum StoredJSON {
    static let maxDepth = 1_000

    static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var scanner = Scanner(bytes: bytes)
            scanner.skipSpace()
            guard scanner.value(depth: 0) else { return false }
            scanner.skipSpace()
            return scanner.index == bytes.count
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        mutating func value(depth: Int) -> Bool {
            guard let byte = current else { return false }
            switch byte {
            case UInt8(ascii: "{"): return container(close: UInt8(ascii: "}"), keyed: true, depth: depth + 1)
            case UInt8(ascii: "["): return container(close: UInt8(ascii: "]"), keyed: false, depth: depth + 1)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number()
            }
        }

        mutating func container(close: UInt8, keyed: Bool, depth: Int) -> Bool {
            guard depth <= StoredJSON.maxDepth else { return false }
            index += 1
            skipSpace()
            if current == close { index += 1; return true }
            while true {
                if keyed {
                    guard current == UInt8(ascii: "\""), string() else { return false }
                    skipSpace()
                    guard current == UInt8(ascii: ":") else { return false }
                    index += 1
                    skipSpace()
                }
                guard value(depth: depth) else { return false }
                skipSpace()
                guard let byte = current else { return false }
                index += 1
                if byte == close { return true }
                guard byte == UInt8(ascii: ",") else { return false }
                skipSpace()
            }
        }

        /// A string; the text is valid UTF-8 already (a Swift `String`), so only control
        /// characters and escapes need checking.
        mutating func string() -> Bool {
            index += 1
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return true
                case 0x00...0x1F: return false
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return false }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                         UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        for _ in 0..<4 {
                            guard let hex = current, Self.isHex(hex) else { return false }
                            index += 1
                        }
                    default: return false
                    }
                default: continue
                }
            }
            return false
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() -> Bool {
            if current == UInt8(ascii: "-") { index += 1 }
            guard let first = current, Self.isDigit(first) else { return false }
            index += 1
            if first != UInt8(ascii: "0") { skipDigits() }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() else { return false }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() else { return false }
            }
            return true
        }

        mutating func digits() -> Bool {
            guard let byte = current, Self.isDigit(byte) else { return false }
            skipDigits()
            return true
        }

        mutating func skipDigits() {
            while let byte = current, Self.isDigit(byte) { index += 1 }
        }

        static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
        static func isHex(_ byte: UInt8) -> Bool {
            isDigit(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
        }
    }
}

extension StoreWrite {
    /// Whether the write creates its environment (then it need not exist before).
    public var createsEnvironment: Bool {
        operations.contains { if case .createEnvironment = $0 { true } else { false } }
    }
}
