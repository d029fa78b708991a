/// The type a preference is declared with. Its raw value is the name used in schemas and
/// in the HTTP API (`"boolean"`, `"integer"`, `"number"`, `"string"`, `"object"`). An `object`
/// preference's members are described by its declaration's ``ObjectSchema``.
public enum PreferenceType: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case boolean, integer, number, string, object

    public var description: String { rawValue }
}

/// A preference value: encodes and decodes as the bare JSON value (`true`, `5`, `2.5`, `"fat"`,
/// `{"color": "red"}`).
///
/// Decoding without a declared type picks the narrowest case (`2` → `.integer(2)`,
/// `2.5` → `.number(2.5)`). Use ``coerced(to:)`` (or ``Preferences/validate(_:)``, which does
/// it for you) to bring a decoded value to a key's declared type: an integer preference
/// rejects `1.5` but accepts `2.0`; a number preference accepts `2`.
public enum PreferenceValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case boolean(Bool)
    case integer(Int)
    case number(Double)
    case string(String)
    /// A JSON object whose members are values again (no arrays, no null): an `object`
    /// preference's value, checked against its declaration's ``ObjectSchema``.
    indirect case object(PreferenceObject)

    /// Equal when of the same case and the same value; strings are equal when their UTF-8
    /// bytes are (JSON's and JSON Schema's equality: same code points), not when they are
    /// canonically equivalent as `String ==` says. That keeps every comparison linear (canonical
    /// equivalence reorders combining marks, quadratic in a run's length) and makes memory, both
    /// stores and OFREP's `variant` agree on what is a change: `"é"` and `"e\u{301}"` differ.
    public static func == (lhs: PreferenceValue, rhs: PreferenceValue) -> Bool {
        switch (lhs, rhs) {
        case let (.boolean(a), .boolean(b)): a == b
        case let (.integer(a), .integer(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.string(a), .string(b)): a.hasSameUTF8(as: b)
        case let (.object(a), .object(b)): a == b
        default: false
        }
    }

    /// Hashes what ``==`` compares (a string's bytes).
    public func hash(into hasher: inout Hasher) {
        switch self {
        case let .boolean(b): hasher.combine(0); hasher.combine(b)
        case let .integer(i): hasher.combine(1); hasher.combine(i)
        case let .number(d): hasher.combine(2); hasher.combine(d)
        case let .string(s):
            hasher.combine(3)
            hasher.combine(s.utf8.count)
            let hashed: Void? = s.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            if hashed == nil { for byte in s.utf8 { hasher.combine(byte) } }
        case let .object(o): hasher.combine(4); hasher.combine(o)
        }
    }

    /// The type this value has as it stands.
    public var type: PreferenceType {
        switch self {
        case .boolean: .boolean
        case .integer: .integer
        case .number: .number
        case .string: .string
        case .object: .object
        }
    }

    /// This value as a value of `type`, or nil when it is not one. Numbers convert where JSON
    /// cannot tell them apart (`2` ↔ `2.0`); nothing else converts (no `"1"` → `1`, no `1` → `true`).
    public func coerced(to type: PreferenceType) -> PreferenceValue? {
        switch (self, type) {
        case (.boolean, .boolean), (.integer, .integer), (.number, .number), (.string, .string), (.object, .object):
            return self
        case let (.integer(i), .number):
            return .number(Double(i))
        case let (.number(d), .integer):
            // JSON Schema's rule: an integer is a number with a zero fractional part.
            // Only up to 2^53 is a JSON number read as floating point still the integer that
            // was sent; beyond that (e.g. -9223372036854775809) it would silently become another.
            guard d.isFinite, d.rounded(.towardZero) == d, abs(d) <= 9_007_199_254_740_992,
                  let i = Int(exactly: d) else { return nil }
            return .integer(i)
        default:
            return nil
        }
    }

    /// The value as a Double, for integer and number values (used by minimum/maximum).
    public var numericValue: Double? {
        switch self {
        case let .integer(i): Double(i)
        case let .number(d): d
        default: nil
        }
    }

    public var description: String {
        switch self {
        case let .boolean(b): String(b)
        case let .integer(i): String(i)
        case let .number(d): String(d)
        case let .string(s): "\"\(s)\""
        case let .object(o): o.description
        }
    }

    public init(from decoder: any Decoder) throws {
        #if DEBUG
        ValueWork.countDecode()
        #endif
        try self.init(decodingFrom: decoder)
    }

    /// Decodes without counting (nested members of an object are part of one decoded value).
    init(decodingFrom decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Order matters: Bool before numbers (JSON true is not 1), Int before Double so `2`
        // stays an integer, Double for fractions and integers beyond Int's range.
        if let b = try? container.decode(Bool.self) {
            self = .boolean(b)
        } else if let i = try? container.decode(Int.self) {
            self = .integer(i)
        } else if let d = try? container.decode(Double.self) {
            self = .number(d)
        } else if let s = try? container.decode(String.self) {
            self = .string(s)
        } else if let o = try? container.decode(PreferenceObject.self) {
            self = .object(o)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "expected a boolean, number, string or object")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case let .boolean(b): try container.encode(b)
        case let .integer(i): try container.encode(i)
        case let .number(d): try container.encode(d)
        case let .string(s): try container.encode(s)
        case let .object(o): try container.encode(o)
        }
    }
}
