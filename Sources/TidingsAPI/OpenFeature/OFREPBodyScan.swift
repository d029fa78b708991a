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
/// what an evaluation costs beyond a `GET`. A byte at a time it cost about 45 instructions a byte
/// (a 1 KB context: 50,000 a request, against 30,000 for a whole cached `GET`); a recursive
/// descent crossing strings eight bytes at a time, about 11,000. Now it is one loop over local
/// state (the position lives in a register, not in a struct every call reads and writes back),
/// with an explicit stack for nesting; strings — nearly all of a context — are crossed sixteen
/// bytes at a time with SSE2 compares (one vector test for a quote, a backslash, a control or a
/// non-ASCII byte); member names are told apart by a 64-bit fingerprint before any `memcmp`; and
/// the names of open objects live in one buffer allocated once, so a body costs no allocation.
struct OFREPBodyScan {
    enum Verdict: Equatable {
        /// An evaluation request.
        case evaluation
        /// Well-formed JSON that is not one (the reason, for `PARSE_ERROR`).
        case notEvaluation(String)
        /// Not JSON at all (the full reading says why: it checks UTF-8 before syntax).
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

    @MainActor
    static func verdict(_ body: [UInt8]) -> Verdict {
        body.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty, bytes.count < Int(Int32.max) else { return .unsure }
            return scan(base, bytes.count, names, frames)
        }
    }

    /// The scan's working memory, allocated once and kept: `verdict` runs on the loop (the main
    /// actor), one scan at a time. (`withUnsafeTemporaryAllocation` puts more than 1 KiB on the
    /// heap: these two cost a `memalign` and a `free` each, about 1,000 instructions a request.
    /// Not `@MainActor` lets: each read of one checked the executor.)
    nonisolated(unsafe) private static let names = UnsafeMutablePointer<Name>.allocate(capacity: maxOpenNames)
    nonisolated(unsafe) private static let frames = UnsafeMutablePointer<Frame>.allocate(capacity: maxDepth)

    /// A member name: where it is, and a fingerprint that differs for different names nearly
    /// always (equal fingerprints are confirmed with `memcmp`).
    private struct Name {
        let start: Int32
        let count: Int32
        let fingerprint: UInt64
    }

    /// An open container's state, saved while a container inside it is read.
    private struct Frame {
        let inObject: Bool
        let role: Role
        /// Its names are `names[firstName...]`.
        let firstName: Int
        let seenLow: UInt64
        let seenHigh: UInt64
    }

    /// Which object is being read: the body, its `context`, or anything else.
    private enum Role { case top, context, ignored }

    /// A well-formed body's verdict on the shape of an evaluation request.
    private enum Shape { case evaluation, contextNotObject, targetingKeyNotString }

    /// What the scan expects next.
    private enum Step { case member, value, afterValue }

    /// Results of the inner scanners below that are not a position.
    private static let malformed = -1
    private static let unsure = -2

    private static func scan(_ bytes: UnsafePointer<UInt8>, _ count: Int, _ names: UnsafeMutablePointer<Name>,
                             _ frames: UnsafeMutablePointer<Frame>) -> Verdict {
        var at = spaceEnd(bytes, 0, count)
        // Another kind of document (or none) is left to the full reading and its own words.
        guard at < count, bytes[at] == UInt8(ascii: "{") else { return .unsure }
        at += 1
        // The innermost open container (the others are in `frames[0..<depth - 1]`).
        var depth = 1
        var inObject = true
        var role = Role.top
        var firstName = 0
        // One bit per name of this object (of 128, chosen by the fingerprint's top bits): a name
        // whose bit is clear cannot have been seen, so most names skip the pairwise comparison.
        var seenLow: UInt64 = 0, seenHigh: UInt64 = 0
        var openNames = 0
        var shape = Shape.evaluation
        // What the member name just read asks of its value.
        var valueIsContext = false, valueIsTargetingKey = false

        at = spaceEnd(bytes, at, count)
        guard at < count else { return .malformed }
        var step = Step.member
        if bytes[at] == UInt8(ascii: "}") {
            at += 1
            return spaceEnd(bytes, at, count) == count ? .evaluation : .malformed
        }
        while true {
            switch step {
            case .member:
                at = spaceEnd(bytes, at, count)
                if role != .top {
                    // Runs of plain `"name":"value"` members (nearly all of a context) in a loop of their own.
                    switch plainMembers(bytes, count, &at, names, &openNames, firstName, &seenLow, &seenHigh) {
                    case .member: break
                    case .afterValue:
                        step = .afterValue
                        continue
                    case .unsure: return .unsure
                    }
                    // It may have stopped after a comma, before white space.
                    at = spaceEnd(bytes, at, count)
                }
                guard at < count, bytes[at] == UInt8(ascii: "\"") else { return .malformed }
                let start = at + 1
                let end = stringEnd(bytes, start, count, name: true)
                guard end >= 0 else { return end == unsure ? .unsure : .malformed }
                at = end
                let length = end - 1 - start
                let fingerprint = fingerprint(bytes, start, length, count)
                let slot = fingerprint >> 57
                let bit: UInt64 = 1 << (slot & 63)
                if slot < 64 ? seenLow & bit != 0 : seenHigh & bit != 0 {
                    var seen = firstName
                    while seen < openNames {
                        let other = names[seen]
                        if other.fingerprint == fingerprint, Int(other.count) == length,
                           memcmp(bytes + Int(other.start), bytes + start, length) == 0 {
                            // Named twice: the full reading says so in its own words.
                            return .unsure
                        }
                        seen += 1
                    }
                }
                if slot < 64 { seenLow |= bit } else { seenHigh |= bit }
                guard openNames - firstName < maxMembers, openNames < maxOpenNames else { return .unsure }
                names[openNames] = Name(start: Int32(truncatingIfNeeded: start), count: Int32(truncatingIfNeeded: length),
                                        fingerprint: fingerprint)
                openNames += 1
                switch role {
                case .ignored: break
                case .top: valueIsContext = isName(bytes, start, length, "context")
                case .context: valueIsTargetingKey = isName(bytes, start, length, "targetingKey")
                }
                at = spaceEnd(bytes, at, count)
                guard at < count, bytes[at] == UInt8(ascii: ":") else { return .malformed }
                at += 1
                step = .value

            case .value:
                guard depth < maxDepth else { return .unsure }
                at = spaceEnd(bytes, at, count)
                guard at < count else { return .malformed }
                let first = bytes[at]
                let isContext = valueIsContext, isTargetingKey = valueIsTargetingKey
                valueIsContext = false
                valueIsTargetingKey = false
                if isContext, first != UInt8(ascii: "{"), shape == .evaluation { shape = .contextNotObject }
                if isTargetingKey, first != UInt8(ascii: "\""), shape == .evaluation { shape = .targetingKeyNotString }
                step = .afterValue
                switch first {
                case UInt8(ascii: "\""):
                    let end = stringEnd(bytes, at + 1, count, name: false)
                    guard end >= 0 else { return end == unsure ? .unsure : .malformed }
                    at = end
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let isObject = first == UInt8(ascii: "{")
                    at = spaceEnd(bytes, at + 1, count)
                    guard at < count else { return .malformed }
                    // An empty container opens nothing.
                    if bytes[at] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        at += 1
                        break
                    }
                    frames[depth - 1] = Frame(inObject: inObject, role: role, firstName: firstName,
                                              seenLow: seenLow, seenHigh: seenHigh)
                    depth += 1
                    inObject = isObject
                    role = isContext ? .context : .ignored
                    firstName = openNames
                    seenLow = 0
                    seenHigh = 0
                    step = isObject ? .member : .value
                case UInt8(ascii: "t"):
                    guard literal(bytes, at, count, "true") else { return .malformed }
                    at += 4
                case UInt8(ascii: "f"):
                    guard literal(bytes, at, count, "false") else { return .malformed }
                    at += 5
                case UInt8(ascii: "n"):
                    guard literal(bytes, at, count, "null") else { return .malformed }
                    at += 4
                default:
                    let end = numberEnd(bytes, at, count)
                    guard end >= 0 else { return end == unsure ? .unsure : .malformed }
                    at = end
                }

            case .afterValue:
                at = spaceEnd(bytes, at, count)
                guard at < count else { return .malformed }
                let byte = bytes[at]
                at += 1
                if byte == UInt8(ascii: ",") {
                    step = inObject ? .member : .value
                    continue
                }
                guard byte == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return .malformed }
                // This container ends: its names go, and the one around it is read on.
                openNames = firstName
                depth -= 1
                if depth == 0 {
                    guard spaceEnd(bytes, at, count) == count else { return .malformed }
                    switch shape {
                    case .evaluation: return .evaluation
                    case .contextNotObject: return .notEvaluation("'context' must be a JSON object.")
                    case .targetingKeyNotString: return .notEvaluation("'context.targetingKey' must be a string.")
                    }
                }
                let outer = frames[depth - 1]
                inObject = outer.inObject
                role = outer.role
                firstName = outer.firstName
                seenLow = outer.seenLow
                seenHigh = outer.seenHigh
            }
        }
    }

    /// Where ``plainMembers`` left the scan.
    private enum PlainEnd { case member, afterValue, unsure }

    /// Reads members of the form `"name":"value"` (no white space, no escapes, plain ASCII, a name
    /// under 16 bytes) from `at`, the opening quote of a name, for as long as they come, and
    /// records their names as the general loop does. It commits a member only once all of it was
    /// read; anything else stops it at that member's start (`.member`: the general loop reads it),
    /// or after a value (`.afterValue`). A member named twice, or one too many, is `.unsure`.
    /// Only for objects other than the body itself, where a string value changes no verdict.
    @inline(never)
    private static func plainMembers(_ bytes: UnsafePointer<UInt8>, _ count: Int, _ position: inout Int,
                                     _ names: UnsafeMutablePointer<Name>, _ openNames: inout Int, _ firstName: Int,
                                     _ seenLow: inout UInt64, _ seenHigh: inout UInt64) -> PlainEnd {
        var at = position
        var open = openNames
        var low = seenLow, high = seenHigh
        defer {
            position = at
            openNames = open
            seenLow = low
            seenHigh = high
        }
        while true {
            // `"name":"` and 16 bytes to read the name from.
            guard at + 17 <= count, bytes[at] == UInt8(ascii: "\"") else { return .member }
            let start = at + 1
            let length = firstLane(specialLanes(bytes, start))
            guard length < 16 else { return .member }
            let colon = start &+ length &+ 1
            guard bytes[start + length] == UInt8(ascii: "\""), colon + 1 < count, bytes[colon] == UInt8(ascii: ":"),
                  bytes[colon + 1] == UInt8(ascii: "\"") else { return .member }
            // The value, up to the first byte that needs a look: its closing quote, or the general loop reads it.
            var valueEnd = colon &+ 2
            while true {
                guard valueEnd &+ 16 <= count else {
                    // The body's last 16 bytes.
                    valueEnd = firstSpecial(bytes, valueEnd, count)
                    break
                }
                let lane = firstLane(specialLanes(bytes, valueEnd))
                valueEnd &+= lane
                if lane < 16 { break }
            }
            guard valueEnd < count, bytes[valueEnd] == UInt8(ascii: "\"") else { return .member }
            // All of the member is plain: its name is recorded as the general loop records it.
            let head = length >= 8 ? load(bytes, start) : load(bytes, start) & ((1 << (8 * UInt64(length))) &- 1)
            let tail = length > 8 ? load(bytes, start + length - 8) : 0
            let fingerprint = mix(head, tail, length)
            let slot = fingerprint >> 57
            let bit: UInt64 = 1 << (slot & 63)
            if slot < 64 ? low & bit != 0 : high & bit != 0 {
                var seen = firstName
                while seen < open {
                    let other = names[seen]
                    if other.fingerprint == fingerprint, Int(other.count) == length,
                       memcmp(bytes + Int(other.start), bytes + start, length) == 0 {
                        return .unsure
                    }
                    seen += 1
                }
            }
            if slot < 64 { low |= bit } else { high |= bit }
            guard open - firstName < maxMembers, open < maxOpenNames else { return .unsure }
            names[open] = Name(start: Int32(truncatingIfNeeded: start), count: Int32(truncatingIfNeeded: length),
                               fingerprint: fingerprint)
            open += 1
            at = valueEnd + 1
            guard at < count, bytes[at] == UInt8(ascii: ",") else { return .afterValue }
            at += 1
        }
    }

    /// The first index from `at` that is not JSON white space (or `count`).
    @inline(__always)
    private static func spaceEnd(_ bytes: UnsafePointer<UInt8>, _ from: Int, _ count: Int) -> Int {
        var at = from
        // Compact JSON has none: one comparison decides.
        while at < count, bytes[at] <= 0x20 {
            switch bytes[at] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): at += 1
            default: return at
            }
        }
        return at
    }

    private static func isName(_ bytes: UnsafePointer<UInt8>, _ start: Int, _ length: Int, _ text: StaticString) -> Bool {
        length == text.utf8CodeUnitCount && memcmp(bytes + start, text.utf8Start, length) == 0
    }

    @inline(__always)
    private static func load(_ bytes: UnsafePointer<UInt8>, _ offset: Int) -> UInt64 {
        UInt64(littleEndian: UnsafeRawPointer(bytes + offset).loadUnaligned(as: UInt64.self))
    }

    /// The length, the first eight bytes and the last eight, mixed: names that differ in any of
    /// them (nearly all that differ at all) differ here.
    @inline(__always)
    private static func fingerprint(_ bytes: UnsafePointer<UInt8>, _ start: Int, _ length: Int, _ count: Int) -> UInt64 {
        var head: UInt64 = 0
        if length >= 8 {
            head = load(bytes, start)
        } else if start + 8 <= count {
            // The bytes after a short name (its quote, at least) are in the body: read eight, keep its own.
            head = load(bytes, start) & ((1 << (8 * UInt64(length))) &- 1)
        } else {
            var index = 0
            while index < length {
                head |= UInt64(bytes[start + index]) << (8 * UInt64(index))
                index += 1
            }
        }
        let tail = length > 8 ? load(bytes, start + length - 8) : 0
        return mix(head, tail, length)
    }

    /// Mixed so that every bit depends on every byte: the filter in `scan` reads the top bits,
    /// and names like `attribute01`…`attribute24` differ only in their last byte.
    @inline(__always)
    private static func mix(_ head: UInt64, _ tail: UInt64, _ length: Int) -> UInt64 {
        var mixed = (head &* 0x9E37_79B9_7F4A_7C15) ^ (tail &+ UInt64(length) &* 0xC2B2_AE3D_27D4_EB4F)
        mixed = (mixed ^ (mixed >> 32)) &* 0xD6E8_FEB8_6659_FD93
        return mixed ^ (mixed >> 32)
    }

    /// From `start` (just after a string's opening quote): the index just past its closing quote,
    /// or ``malformed`` / ``unsure``. Plain ASCII only; no escapes in a member name.
    @inline(__always)
    private static func stringEnd(_ bytes: UnsafePointer<UInt8>, _ start: Int, _ count: Int, name: Bool) -> Int {
        var at = start
        while true {
            at = firstSpecial(bytes, at, count)
            guard at < count else { return malformed }
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") { return at + 1 }
            if byte >= 0x80 || (byte == UInt8(ascii: "\\") && name) { return unsure }
            if byte < 0x20 { return malformed }
            // A backslash in a value.
            at += 1
            guard at < count else { return malformed }
            switch bytes[at] {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                 UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                at += 1
            case UInt8(ascii: "u"):
                // `\u` escapes can spell combining marks and surrogates: the full reading checks those.
                return unsure
            default:
                return malformed
            }
        }
    }

    /// The lanes of 16 bytes that need a look of their own inside a string: a quote, a backslash,
    /// a control byte (< 0x20) or a non-ASCII byte (the last two: below 0x20 read as signed bytes).
    /// Compiles to three SSE2 compares, two ors and a `pmovmskb` for `any`.
    @inline(__always)
    private static func specialLanes(_ bytes: UnsafePointer<UInt8>, _ offset: Int) -> SIMDMask<SIMD16<Int8>> {
        let vector = UnsafeRawPointer(bytes + offset).loadUnaligned(as: SIMD16<UInt8>.self)
        let signed = unsafeBitCast(vector, to: SIMD16<Int8>.self)
        return (vector .== SIMD16(repeating: UInt8(ascii: "\""))) .| (vector .== SIMD16(repeating: UInt8(ascii: "\\")))
            .| (signed .< SIMD16(repeating: 0x20))
    }

    /// The first lane set in `lanes`, 16 when none is. (Read from the lanes as two words: `any`
    /// compiled to a call of the generic `min` where its lanes were used again.)
    @inline(__always)
    private static func firstLane(_ lanes: SIMDMask<SIMD16<Int8>>) -> Int {
        let words = unsafeBitCast(lanes, to: SIMD2<UInt64>.self)
        return words[0] != 0 ? words[0].trailingZeroBitCount &>> 3 : 8 &+ words[1].trailingZeroBitCount &>> 3
    }

    /// The index of the first byte from `from` that needs a look inside a string, or `count`.
    @inline(__always)
    private static func firstSpecial(_ bytes: UnsafePointer<UInt8>, _ from: Int, _ count: Int) -> Int {
        var at = from
        while at &+ 16 <= count {
            let lanes = specialLanes(bytes, at)
            if any(lanes) { return at &+ firstLane(lanes) }
            at &+= 16
        }
        guard at < count else { return count }
        if count >= 16 {
            // The last 16 bytes of the body, without the lanes before `at` (already crossed).
            let window = count - 16
            var words = unsafeBitCast(specialLanes(bytes, window), to: SIMD2<UInt64>.self)
            let crossed = at &- window   // 1...15 lanes
            if crossed >= 8 {
                words[0] = 0
                words[1] &= ~0 &<< UInt64(8 &* (crossed &- 8))
            } else {
                words[0] &= ~0 &<< UInt64(8 &* crossed)
            }
            if words[0] != 0 { return window &+ words[0].trailingZeroBitCount &>> 3 }
            return words[1] != 0 ? window &+ 8 &+ words[1].trailingZeroBitCount &>> 3 : count
        }
        while at < count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte >= 0x80 { return at }
            at += 1
        }
        return count
    }

    @inline(__always)
    private static func literal(_ bytes: UnsafePointer<UInt8>, _ at: Int, _ count: Int, _ word: StaticString) -> Bool {
        let length = word.utf8CodeUnitCount
        return at + length <= count && memcmp(bytes + at, word.utf8Start, length) == 0
    }

    /// The end of `-?(0|[1-9][0-9]*)(\.[0-9]+)?` at `start`, or ``malformed``; an exponent, or more
    /// than 15 characters (maybe out of a double's range), is ``unsure``: the full reading decides.
    private static func numberEnd(_ bytes: UnsafePointer<UInt8>, _ start: Int, _ count: Int) -> Int {
        func digit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        var at = start
        var wellFormed = true
        if at < count, bytes[at] == UInt8(ascii: "-") { at += 1 }
        if at < count, digit(bytes[at]) {
            if bytes[at] == UInt8(ascii: "0") {
                at += 1
            } else {
                while at < count, digit(bytes[at]) { at += 1 }
            }
            if at < count, bytes[at] == UInt8(ascii: ".") {
                at += 1
                let fraction = at
                while at < count, digit(bytes[at]) { at += 1 }
                wellFormed = at > fraction
            }
        } else {
            wellFormed = false
        }
        if at - start > 15 { return unsure }
        guard wellFormed else { return malformed }
        if at < count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") { return unsure }
        return at
    }
}
