import Foundation

/// One pass over an OFREP evaluation body that decides, without building a single value, whether
/// it is an evaluation request: strict JSON (RFC 8259), a top-level object whose `context`, when
/// present, is an object whose `targetingKey`, when present, is a string; no member named twice.
///
/// It decides only the bodies nearly every provider sends: plain ASCII, member names without
/// escapes, objects of at most ``maxMembers`` members. Anything else is ``Verdict/unsure`` and goes
/// to the full reading (`Request.decode`), so both agree on every body and the rare one pays for
/// the thorough checks (UTF-8, combining marks, escaped names, many members).
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

    static func verdict(_ body: [UInt8]) -> Verdict {
        body.withUnsafeBufferPointer { bytes in
            var scan = OFREPBodyScan(bytes: bytes)
            return scan.run()
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var at = 0
    private var unsure = false

    private init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    private mutating func run() -> Verdict {
        skipSpace()
        // Another kind of document (or none) is left to the full reading and its own words.
        guard at < bytes.count, bytes[at] == UInt8(ascii: "{") else { return .unsure }
        guard let shape = value(depth: 0, role: .top), atEnd() else { return unsure ? .unsure : .malformed }
        return unsure ? .unsure : shape
    }

    /// Which object is being read: the body, its `context`, or anything else.
    private enum Role { case top, context, ignored }

    private mutating func atEnd() -> Bool {
        skipSpace()
        return at == bytes.count
    }

    private mutating func skipSpace() {
        while at < bytes.count {
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
        guard at < bytes.count else { return nil }
        switch bytes[at] {
        case UInt8(ascii: "{"): return object(depth: depth, role: role)
        case UInt8(ascii: "["):
            at += 1
            skipSpace()
            if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .evaluation }
            while true {
                guard value(depth: depth + 1, role: .ignored) != nil else { return nil }
                skipSpace()
                guard at < bytes.count else { return nil }
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
        var names: [Range<Int>] = []
        var verdict = Verdict.evaluation
        skipSpace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return verdict }
        while true {
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { return nil }
            let start = at + 1
            guard string(name: true) else { return nil }
            let name = start..<(at - 1)
            for seen in names where same(seen, name) {
                // Named twice: the full reading says so in its own words.
                unsure = true
                return nil
            }
            names.append(name)
            if names.count > Self.maxMembers { unsure = true; return nil }
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
            at += 1
            skipSpace()
            guard at < bytes.count else { return nil }
            let first = bytes[at]
            let childRole: Role = role == .top && isName(name, "context") ? .context : .ignored
            guard let child = value(depth: depth + 1, role: childRole) else { return nil }
            if role == .top, isName(name, "context"), verdict == .evaluation {
                if first != UInt8(ascii: "{") { verdict = .notEvaluation("'context' must be a JSON object.") } else { verdict = child }
            }
            if role == .context, isName(name, "targetingKey"), first != UInt8(ascii: "\""), verdict == .evaluation {
                verdict = .notEvaluation("'context.targetingKey' must be a string.")
            }
            skipSpace()
            guard at < bytes.count else { return nil }
            if bytes[at] == UInt8(ascii: "}") { at += 1; return verdict }
            guard bytes[at] == UInt8(ascii: ",") else { return nil }
            at += 1
        }
    }

    private func isName(_ range: Range<Int>, _ name: StaticString) -> Bool {
        range.count == name.utf8CodeUnitCount && memcmp(bytes.baseAddress! + range.lowerBound, name.utf8Start, range.count) == 0
    }

    /// Whether two member names have the same bytes (`memcmp`: the scan stays cheap unoptimised too).
    private func same(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
        a.count == b.count && memcmp(bytes.baseAddress! + a.lowerBound, bytes.baseAddress! + b.lowerBound, a.count) == 0
    }

    /// A string at `at` (its opening quote); plain ASCII only, no escapes in a member name.
    private mutating func string(name: Bool) -> Bool {
        at += 1
        while at < bytes.count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") { at += 1; return true }
            if byte >= 0x80 || (byte == UInt8(ascii: "\\") && name) { unsure = true; return false }
            if byte < 0x20 { return false }
            if byte == UInt8(ascii: "\\") {
                at += 1
                guard at < bytes.count else { return false }
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
        return false
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard at + count <= bytes.count, memcmp(bytes.baseAddress! + at, word.utf8Start, count) == 0 else { return false }
        at += count
        return true
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    private mutating func number() -> Bool {
        func digit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func digits() -> Bool {
            let start = at
            while at < bytes.count, digit(bytes[at]) { at += 1 }
            return at > start
        }
        let start = at
        defer {
            // Long numbers and exponents may be out of a double's range: the full reading decides.
            if at - start > 15 { unsure = true }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        guard at < bytes.count, digit(bytes[at]) else { return false }
        if bytes[at] == UInt8(ascii: "0") { at += 1 } else { _ = digits() }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            guard digits() else { return false }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            unsure = true
            return false
        }
        return true
    }
}
