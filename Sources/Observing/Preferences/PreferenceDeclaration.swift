/// One declared preference: its key, type, default and constraints.
///
/// Invariant (checked by ``Preferences`` when it is created): the default has the declared
/// type and satisfies the constraints, `minimum <= maximum`, constraints fit the type
/// (`minimum`/`maximum` for numbers, `maxLength` for strings, an ``ObjectSchema`` for objects),
/// and `allowedValues` match the type.
public struct PreferenceDeclaration: Sendable, Hashable {
    public let key: String
    /// The type and constraints a value must meet.
    public let rules: ValueRules
    public let defaultValue: PreferenceValue
    public let description: String?
    /// The longest string a preference without its own `maxLength` holds (openapi.yaml "Sizes").
    public static let defaultMaxLength = ValueRules.defaultMaxLength

    public var type: PreferenceType { rules.type }
    /// Inclusive bounds for integer and number preferences.
    public var minimum: Double? { rules.minimum }
    public var maximum: Double? { rules.maximum }
    /// Longest allowed string, counted in Unicode scalars (as JSON Schema counts); nil means
    /// `defaultMaxLength`.
    public var maxLength: Int? { rules.maxLength }
    /// When set, the only values accepted (JSON Schema's `enum`).
    public var allowedValues: [PreferenceValue]? { rules.allowedValues }
    /// The members of an `object` preference.
    public var object: ObjectSchema? { rules.object }

    public init(
        key: String, type: PreferenceType, defaultValue: PreferenceValue,
        description: String? = nil, minimum: Double? = nil, maximum: Double? = nil,
        maxLength: Int? = nil, allowedValues: [PreferenceValue]? = nil, object: ObjectSchema? = nil
    ) {
        self.key = key
        rules = ValueRules(type: type, minimum: minimum, maximum: maximum, maxLength: maxLength,
                           allowedValues: allowedValues, object: object)
        self.defaultValue = defaultValue
        self.description = description
    }

    /// `value` brought to the declared type and checked against the constraints.
    public func check(_ value: PreferenceValue) -> Result<PreferenceValue, PreferenceProblem> {
        #if DEBUG
        ValueWork.countCheck()
        #endif
        return rules.check(value, depth: 0)
    }

    /// Problems with the declaration itself (empty when it is sound).
    func declarationProblems() -> [String] {
        var problems: [String] = []
        if key.isEmpty { problems.append("the key is empty") }
        problems += rules.declarationProblems(depth: 0)
        if problems.isEmpty, case let .failure(problem) = check(defaultValue) {
            problems.append("default \(defaultValue) is invalid: \(problem.message)")
        }
        return problems
    }
}

/// A type and its constraints: what a preference's value (or one member of an object
/// preference) must meet. ``check(_:depth:)`` brings a value to the type and checks it.
public struct ValueRules: Sendable, Hashable {
    public let type: PreferenceType
    /// Inclusive bounds for integer and number values.
    public let minimum: Double?
    public let maximum: Double?
    /// Longest allowed string, counted in Unicode scalars; nil means ``defaultMaxLength``.
    public let maxLength: Int?
    /// When set, the only values accepted (JSON Schema's `enum`; scalars only).
    public let allowedValues: [PreferenceValue]?
    /// The members of an object (nil for the other types).
    public let object: ObjectSchema?

    /// The longest string a value without its own `maxLength` holds (openapi.yaml "Sizes").
    public static let defaultMaxLength = 65_536

    public init(type: PreferenceType, minimum: Double? = nil, maximum: Double? = nil, maxLength: Int? = nil,
                allowedValues: [PreferenceValue]? = nil, object: ObjectSchema? = nil) {
        self.type = type
        self.minimum = minimum
        self.maximum = maximum
        self.maxLength = maxLength
        self.allowedValues = allowedValues
        self.object = object
    }

    /// `value` brought to the type and checked; `depth`: how deep inside an object preference
    /// it sits (0 for a preference's own value, which alone is bounded in bytes as a whole).
    public func check(_ value: PreferenceValue, depth: Int) -> Result<PreferenceValue, PreferenceProblem> {
        guard let typed = value.coerced(to: type) else { return .failure(.wrongType(expected: type)) }
        // NaN and infinities have no JSON form; refusing them keeps every value encodable.
        if case let .number(d) = typed, !d.isFinite { return .failure(.wrongType(expected: type)) }
        if let minimum, let n = typed.numericValue, n < minimum { return .failure(.belowMinimum(minimum)) }
        if let maximum, let n = typed.numericValue, n > maximum { return .failure(.aboveMaximum(maximum)) }
        if case let .string(s) = typed {
            let limit = maxLength ?? Self.defaultMaxLength
            // UTF-8 bytes bound scalars from above: skip the count for short strings, and count
            // no further than the limit for long ones.
            let scalars = s.unicodeScalars
            if s.utf8.count > limit, let end = scalars.index(scalars.startIndex, offsetBy: limit, limitedBy: scalars.endIndex),
               end != scalars.endIndex {
                return .failure(.tooLong(maxLength: limit))
            }
            // Before anything compares or hashes it canonically (quadratic in a run's length).
            if !StreamSafeText.isStreamSafe(s) { return .failure(.tooManyCombiningMarks(StreamSafeText.maxNonStarterRun)) }
        }
        if case let .object(members) = typed {
            // Bounded in bytes before any member is checked (a value can be as large as a body).
            if depth == 0, members.jsonByteCount(limit: ObjectSchema.maxBytes) > ObjectSchema.maxBytes {
                return .failure(.tooLarge(maxBytes: ObjectSchema.maxBytes))
            }
            return (object ?? ObjectSchema()).check(members, depth: depth)
        }
        if let allowedValues, !allowedValues.contains(typed) {
            return .failure(.notAllowed(allowedValues))
        }
        return .success(typed)
    }

    /// Problems with the rules themselves (empty when they are sound).
    func declarationProblems(depth: Int) -> [String] {
        var problems: [String] = []
        if minimum != nil || maximum != nil, type != .integer, type != .number {
            problems.append("minimum/maximum apply only to integer and number preferences, not \(type)")
        }
        if maxLength != nil, type != .string {
            problems.append("maxLength applies only to string preferences, not \(type)")
        }
        if let maxLength, maxLength < 0 { problems.append("maxLength must not be negative") }
        if let minimum, let maximum, minimum > maximum {
            problems.append("minimum \(formatNumber(minimum)) is greater than maximum \(formatNumber(maximum))")
        }
        for bound in [minimum, maximum].compactMap({ $0 }) where !bound.isFinite {
            problems.append("bounds must be finite numbers")
        }
        if let allowedValues {
            if type == .object {
                problems.append("enum applies only to boolean, integer, number and string preferences, not object")
            } else {
                if allowedValues.isEmpty { problems.append("enum must list at least one value") }
                for v in allowedValues where v.coerced(to: type) == nil {
                    problems.append("enum value \(v) is not of type \(type)")
                }
            }
        }
        if type == .object {
            problems += (object ?? ObjectSchema()).declarationProblems(depth: depth)
        } else if object != nil {
            problems.append("properties, required and additionalProperties apply only to object preferences, not \(type)")
        }
        return problems
    }
}

/// Why a value was refused for a key.
public enum PreferenceProblem: Error, Sendable, Hashable {
    case unknownKey
    case wrongType(expected: PreferenceType)
    case belowMinimum(Double)
    case aboveMaximum(Double)
    case tooLong(maxLength: Int)
    case notAllowed([PreferenceValue])
    /// A run of more combining marks (non-starters) than Unicode's stream-safe format allows.
    case tooManyCombiningMarks(Int)
    /// A member of an object value is wrong (its name, and what is wrong with it).
    indirect case member(String, PreferenceProblem)
    /// A required member of an object is missing.
    case missingMember
    /// A member no property declares, in an object without `additionalProperties`.
    case undeclaredMember
    /// A JSON kind no preference holds (an array, or null inside an object).
    case unsupportedKind(String)
    /// An object value larger than ``ObjectSchema/maxBytes`` as JSON.
    case tooLarge(maxBytes: Int)
    /// Objects nested deeper than ``ObjectSchema/maxDepth``.
    case tooDeep(Int)

    /// A sentence for problem details, e.g. "expected a value of type integer".
    public var message: String {
        switch self {
        case .unknownKey: "unknown preference"
        case let .wrongType(expected): "expected a value of type \(expected)"
        case let .belowMinimum(m): "must be at least \(formatNumber(m))"
        case let .aboveMaximum(m): "must be at most \(formatNumber(m))"
        case let .tooLong(n): "must be at most \(n) characters long"
        case let .notAllowed(values): "must be one of \(values.map(\.description).joined(separator: ", "))"
        case let .tooManyCombiningMarks(n): "must not hold more than \(n) combining marks in a row (Unicode's stream-safe format, UAX #15)"
        case .member: memberMessage
        case .missingMember: "is required"
        case .undeclaredMember: "is not declared (the object has no additionalProperties)"
        case let .unsupportedKind(kind): "\(kind) is not a preference value (expected a boolean, number, string or object)"
        case let .tooLarge(n): "must be at most \(n) bytes as JSON"
        case let .tooDeep(n): "must not nest objects more than \(n) deep"
        }
    }

    private var memberMessage: String {
        let (path, problem) = memberPath
        // "property "a" must be …", "property "a" is required", but "property "a": expected …".
        let separator: String
        switch problem {
        case .wrongType, .unsupportedKind: separator = ": "
        default: separator = " "
        }
        return "property \"\(path.joined(separator: "."))\"" + separator + problem.message
    }

    /// For a problem inside an object: the member names down to it, and the problem there.
    public var memberPath: (path: [String], problem: PreferenceProblem) {
        var path: [String] = []
        var problem = self
        while case let .member(name, inner) = problem {
            path.append(name)
            problem = inner
        }
        return (path, problem)
    }

}

/// `5` rather than `5.0` for whole bounds in messages.
func formatNumber(_ d: Double) -> String {
    if d.rounded(.towardZero) == d, let i = Int(exactly: d) { return String(i) }
    return String(d)
}

/// One refused key in a ``PreferenceValidationError``.
public struct PreferenceIssue: Sendable, Hashable, CustomStringConvertible {
    public let key: String
    public let problem: PreferenceProblem
    public init(key: String, problem: PreferenceProblem) {
        self.key = key
        self.problem = problem
    }
    public var message: String { problem.message }
    public var description: String { "\(key): \(message)" }
}

/// Every key a set of changes got wrong, sorted by key. Nothing was applied.
public struct PreferenceValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    public let issues: [PreferenceIssue]
    public init(issues: [PreferenceIssue]) {
        self.issues = issues.sorted { $0.key < $1.key }
    }
    public var description: String { issues.map(\.description).joined(separator: "; ") }
}
