/// Any JSON value, decoded without a schema: so that a document's errors can name the key and
/// the problem instead of failing the whole document (preference schema files, merge patches,
/// upstream posts), and so that a document can be written back with members nobody declared
/// (posts keep their extra fields). Integers stay apart from other numbers.
public enum JSONValue: Sendable, Hashable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let single = try decoder.singleValueContainer()
        // Most common kinds first: every failed attempt costs a thrown error. (JSONDecoder
        // never reads `true` as a number nor `1` as a boolean, so the order changes nothing else.)
        if single.decodeNil() {
            self = .null
        } else if let string = try? single.decode(String.self) {
            self = .string(string)
        } else if let integer = try? single.decode(Int64.self) {
            self = .integer(integer)
        } else if let number = try? single.decode(Double.self) {
            self = .number(number)
        } else if let bool = try? single.decode(Bool.self) {
            self = .bool(bool)
        } else if let object = try? single.decode([String: JSONValue].self) {
            self = .object(object)
        } else {
            self = .array(try single.decode([JSONValue].self))
        }
    }

    /// Writes the value back (object keys in the encoder's order: sorted for the server's).
    public func encode(to encoder: any Encoder) throws {
        var single = encoder.singleValueContainer()
        switch self {
        case .null: try single.encodeNil()
        case let .bool(value): try single.encode(value)
        case let .integer(value): try single.encode(value)
        case let .number(value): try single.encode(value)
        case let .string(value): try single.encode(value)
        case let .array(value): try single.encode(value)
        case let .object(value): try single.encode(value)
        }
    }

    /// The value as a preference value (before it is brought to a declared type): a scalar, or an
    /// object whose members all are preference values; nil for null, arrays and objects holding one.
    public var preferenceValue: PreferenceValue? {
        try? preferenceValueOrProblem().get()
    }

    /// As ``preferenceValue``, or what is not a preference value: the kind, inside an object the
    /// member it is in (``PreferenceProblem/member(_:_:)`` around ``PreferenceProblem/unsupportedKind(_:)``).
    public func preferenceValueOrProblem() -> Result<PreferenceValue, PreferenceProblem> {
        switch self {
        case let .bool(value): return .success(.boolean(value))
        case let .integer(value): return .success(.integer(Int(value)))
        case let .number(value): return .success(.number(value))
        case let .string(value): return .success(.string(value))
        case .null, .array: return .failure(.unsupportedKind(typeName))
        case let .object(members):
            var converted: [PreferenceObject.Member] = []
            converted.reserveCapacity(members.count)
            for (name, member) in members {
                switch member.preferenceValueOrProblem() {
                case let .success(value): converted.append(.init(name: name, value: value))
                case let .failure(problem): return .failure(.member(name, problem))
                }
            }
            return .success(.object(PreferenceObject(sorting: converted)))
        }
    }

    /// "null", "boolean", "integer", "number", "string", "array" or "object" (the type names
    /// of preference declarations and JSON Schema).
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// "null", "a boolean", "an integer", … for messages about the wrong kind of value.
    public var kindName: String {
        switch self {
        case .null: "null"
        case .integer, .array, .object: "an " + typeName
        case .bool, .number, .string: "a " + typeName
        }
    }
}
