import Foundation

/// One pass over an OFREP evaluation body that decides, without building a single value, whether
/// it is an evaluation request: strict JSON (RFC 8259), a top-level object whose `context`, when
/// present, is an object whose `targetingKey`, when present, is a string; no member named twice.
///
/// It decides only the bodies nearly every provider sends: plain ASCII, member names without
/// escapes, objects of at most ``maxMembers`` members. Anything else is ``Verdict/unsure`` and goes
/// to the full reading (`Request.decode`), so both agree on every body and the rare one pays for
/// the thorough checks (UTF-8, combining marks, escaped names, many members).
///
/// Why it is written this way: an evaluation's answer is cached bytes, so this scan is most of
/// what an evaluation costs beyond a `GET`. A byte at a time it cost about 45 instructions a
/// byte (a 1 KB context: 50,000 a request, against 33,000 for a whole cached `GET`). Strings —
/// nearly all of a context — are now crossed eight bytes at a time (one word tested at once for a
/// quote, a backslash, a control or a non-ASCII byte), member names are told apart by a 64-bit
/// fingerprint before any `memcmp`, and the names of open objects live in one stack-allocated
/// buffer, so a body costs no allocation.
struct OFREPBodyScan {
    enum Verdict: Equatable {
        /// An evaluation request.
        case evaluation
        /// Well-formed JSON that is not one (the reason, for `PARSE_ERROR`).
        case notEvaluation(String)
        /// Not JSON at all.
        case malformed
        /// Not decided here.
        case unsure
    }

    /// Objects with more members than this are left to the full reading (duplicate names are
    /// compared pairwise here).
    static let maxMembers = 32
    /// Nesting deeper than this is left to the full reading.
    static let maxDepth = 64
    /// Names of all the objects open at once (nested ones add theirs): more is left to the full
    /// reading. Bounds the stack buffer the names are kept in (16 bytes each).
    static let maxOpenNames = 256

    static func verdict(_ body: [UInt8]) -> Verdict {
        body.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty, bytes.count < Int(Int32.max) else { return .unsure }
            return withUnsafeTemporaryAllocation(of: Name.self, capacity: maxOpenNames) { names in
                var scan = OFREPBodyScan(bytes: base, count: bytes.count, names: names.baseAddress!)
                return scan.run()
            }
        }
    }

    /// A member name: where it is, and a fingerprint that differs for different names nearly
    /// always (equal fingerprints are confirmed with `memcmp`).
    private struct Name {
        let start: Int32
        let count: Int32
        let fingerprint: UInt64
    }

    private let bytes: UnsafePointer<UInt8>
    private let count: Int
    private let names: UnsafeMutablePointer<Name>
    private var openNames = 0
    private var at = 0
    private var unsure = false

    private init(bytes: UnsafePointer<UInt8>, count: Int, names: UnsafeMutablePointer<Name>) {
        self.bytes = bytes
        self.count = count
        self.names = names
    }

    private mutating func run() -> Verdict {
        skipSpace()
        // Another kind of document (or none) is left to the full reading and its own words.
        guard at < count, bytes[at] == UInt8(ascii: "{") else { return .unsure }
        guard let shape = value(depth: 0, role: .top), atEnd() else { return unsure ? .unsure : .malformed }
        return unsure ? .unsure : shape
    }

    /// Which object is being read: the body, its `context`, or anything else.
    private enum Role { case top, context, ignored }

    private mutating func atEnd() -> Bool {
        skipSpace()
        return at == count
    }

    @inline(__always)
    private mutating func skipSpace() {
        while at < count {
            switch bytes[at] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): at += 1
            default: return
            }
        }
    }

    /// Reads one value; nil when malformed (or unsure: then `unsure` is set). For the body and its
    /// context, the verdict on their shape.
    private mutating func value(depth: Int, role: Role) -> Verdict? {
        guard depth < Self.maxDepth else { unsure = true; return nil }
        skipSpace()
        guard at < count else { return nil }
        switch bytes[at] {
        case UInt8(ascii: "{"): return object(depth: depth, role: role)
        case UInt8(ascii: "["):
            at += 1
            skipSpace()
            if at < count, bytes[at] == UInt8(ascii: "]") { at += 1; return .evaluation }
            while true {
                guard value(depth: depth + 1, role: .ignored) != nil else { return nil }
                skipSpace()
                guard at < count else { return nil }
                if bytes[at] == UInt8(ascii: "]") { at += 1; return .evaluation }
                guard bytes[at] == UInt8(ascii: ",") else { return nil }
                at += 1
            }
        case UInt8(ascii: "\""): return string(name: false) ? .evaluation : nil
        case UInt8(ascii: "t"): return literal("true") ? .evaluation : nil
        case UInt8(ascii: "f"): return literal("false") ? .evaluation : nil
        case UInt8(ascii: "n"): return literal("null") ? .evaluation : nil
        default: return number() ? .evaluation : nil
        }
    }

    private mutating func object(depth: Int, role: Role) -> Verdict? {
        at += 1
        let first = openNames
        // This object's names are `names[first..<openNames]`; they go when it ends, however it ends.
        defer { openNames = first }
        var verdict = Verdict.evaluation
        skipSpace()
        if at < count, bytes[at] == UInt8(ascii: "}") { at += 1; return verdict }
        while true {
            skipSpace()
            guard at < count, bytes[at] == UInt8(ascii: "\"") else { return nil }
            let start = at + 1
            guard string(name: true) else { return nil }
            let name = Name(start: Int32(truncatingIfNeeded: start), count: Int32(truncatingIfNeeded: at - 1 - start),
                            fingerprint: fingerprint(start, at - 1 - start))
            var seen = first
            while seen < openNames {
                if names[seen].fingerprint == name.fingerprint, same(names[seen], name) {
                    // Named twice: the full reading says so in its own words.
                    unsure = true
                    return nil
                }
                seen += 1
            }
            guard openNames - first < Self.maxMembers, openNames < Self.maxOpenNames else { unsure = true; return nil }
            names[openNames] = name
            openNames += 1
            skipSpace()
            guard at < count, bytes[at] == UInt8(ascii: ":") else { return nil }
            at += 1
            skipSpace()
            guard at < count else { return nil }
            let valueStart = bytes[at]
            let isContext = role == .top && isName(name, "context")
            guard let child = value(depth: depth + 1, role: isContext ? .context : .ignored) else { return nil }
            if isContext, verdict == .evaluation {
                if valueStart != UInt8(ascii: "{") { verdict = .notEvaluation("'context' must be a JSON object.") } else { verdict = child }
            }
            if role == .context, verdict == .evaluation, valueStart != UInt8(ascii: "\""), isName(name, "targetingKey") {
                verdict = .notEvaluation("'context.targetingKey' must be a string.")
            }
            skipSpace()
            guard at < count else { return nil }
            if bytes[at] == UInt8(ascii: "}") { at += 1; return verdict }
            guard bytes[at] == UInt8(ascii: ",") else { return nil }
            at += 1
        }
    }

    /// Up to eight bytes at `offset` as one word (little-endian order of the bytes that exist).
    @inline(__always)
    private func word(_ offset: Int, _ length: Int) -> UInt64 {
        if length >= 8 { return UnsafeRawPointer(bytes + offset).loadUnaligned(as: UInt64.self) }
        var value: UInt64 = 0
        var index = 0
        while index < length {
            value |= UInt64(bytes[offset + index]) << (8 * UInt64(index))
            index += 1
        }
        return value
    }

    /// The length, the first eight bytes and the last eight, mixed: names that differ in any of
    /// them (nearly all that differ at all) differ here.
    private func fingerprint(_ start: Int, _ length: Int) -> UInt64 {
        let head = word(start, length)
        let tail = length > 8 ? word(start + length - 8, 8) : 0
        return (head &* 0x9E37_79B9_7F4A_7C15) ^ (tail &+ UInt64(length) &* 0xC2B2_AE3D_27D4_EB4F)
    }

    private func isName(_ name: Name, _ text: StaticString) -> Bool {
        Int(name.count) == text.utf8CodeUnitCount && memcmp(bytes + Int(name.start), text.utf8Start, Int(name.count)) == 0
    }

    /// Whether two member names have the same bytes.
    private func same(_ a: Name, _ b: Name) -> Bool {
        a.count == b.count && memcmp(bytes + Int(a.start), bytes + Int(b.start), Int(a.count)) == 0
    }

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// Whether any byte of `word` needs a look of its own inside a string: a quote, a backslash,
    /// a control byte (< 0x20) or a non-ASCII byte. May say yes for a plain byte that follows one
    /// that does (borrows carry upwards); never says no for one that does.
    @inline(__always)
    private static func needsLook(_ word: UInt64) -> Bool {
        func zeroByte(_ value: UInt64) -> UInt64 { (value &- ones) & ~value }
        let quote = zeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        let backslash = zeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        let control = (word &- ones &* 0x20) & ~word
        return (quote | backslash | control | word) & highs != 0
    }

    /// A string at `at` (its opening quote); plain ASCII only, no escapes in a member name.
    private mutating func string(name: Bool) -> Bool {
        at += 1
        while true {
            // Eight plain bytes at a time; the byte that stops it is read below.
            while at + 8 <= count, !Self.needsLook(UnsafeRawPointer(bytes + at).loadUnaligned(as: UInt64.self)) {
                at += 8
            }
            guard at < count else { return false }
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") { at += 1; return true }
            if byte >= 0x80 || (byte == UInt8(ascii: "\\") && name) { unsure = true; return false }
            if byte < 0x20 { return false }
            if byte == UInt8(ascii: "\\") {
                at += 1
                guard at < count else { return false }
                switch bytes[at] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                     UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    break
                case UInt8(ascii: "u"):
                    // `\u` escapes can spell combining marks and surrogates: the full reading checks those.
                    unsure = true
                    return false
                default:
                    return false
                }
            }
            at += 1
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let length = word.utf8CodeUnitCount
        guard at + length <= count, memcmp(bytes + at, word.utf8Start, length) == 0 else { return false }
        at += length
        return true
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    private mutating func number() -> Bool {
        func digit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func digits() -> Bool {
            let start = at
            while at < count, digit(bytes[at]) { at += 1 }
            return at > start
        }
        let start = at
        defer {
            // Long numbers and exponents may be out of a double's range: the full reading decides.
            if at - start > 15 { unsure = true }
        }
        if at < count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        guard at < count, digit(bytes[at]) else { return false }
        if bytes[at] == UInt8(ascii: "0") { at += 1 } else { _ = digits() }
        if at < count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            guard digits() else { return false }
        }
        if at < count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            unsure = true
            return false
        }
        return true
    }
}
