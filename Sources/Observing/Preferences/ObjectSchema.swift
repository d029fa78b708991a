/// What an `object` preference (or an object member of one) may hold, in JSON Schema's words:
/// `properties` (each a scalar type with its constraints, or an object again), `required`, and
/// `additionalProperties` (false unless declared: a member nobody declared is refused).
///
/// ```swift
/// let theme = ObjectSchema(properties: [
///     PropertyDeclaration(name: "color", rules: ValueRules(type: .string, allowedValues: [.string("red"), .string("blue")])),
///     PropertyDeclaration(name: "size", rules: ValueRules(type: .integer, minimum: 1)),
/// ], required: ["color"])
/// ```
public struct ObjectSchema: Sendable, Hashable {
    /// The declared members, sorted by name (UTF-8 bytes, as ``PreferenceObject`` sorts).
    public let properties: [PropertyDeclaration]
    /// Names that must be present (each a declared property), sorted.
    public let required: [String]
    /// Whether members not in `properties` are kept (any scalar or object, unchecked but for the
    /// size bounds) rather than refused.
    public let additionalProperties: Bool

    /// How deep objects may nest inside one value (declarations and values alike): the checks
    /// recurse, so the depth a client can send is bounded here.
    public static let maxDepth = 32
    /// The most bytes one object value may take as JSON (its stored and sent text), like the
    /// 65,536-character bound on a string: whatever the declaration allows, one value stays small.
    public static let maxBytes = 65_536

    public init(properties: [PropertyDeclaration] = [], required: [String] = [], additionalProperties: Bool = false) {
        self.properties = properties.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        self.required = required.sorted()
        self.additionalProperties = additionalProperties
    }

    /// The declared property `name`, or nil.
    public func property(named name: String) -> PropertyDeclaration? {
        properties.first { $0.name.hasSameUTF8(as: name) }
    }

    /// `object` checked member by member: declared members against their rules (numbers brought to
    /// their declared type), others kept or refused as `additionalProperties` says, required ones
    /// present. The first problem is returned, naming the member.
    func check(_ object: PreferenceObject, depth: Int) -> Result<PreferenceValue, PreferenceProblem> {
        guard depth < Self.maxDepth else { return .failure(.tooDeep(Self.maxDepth)) }
        var checked: [PreferenceObject.Member] = []
        checked.reserveCapacity(object.members.count)
        for member in object.members {
            if !StreamSafeText.isStreamSafe(member.name) {
                return .failure(.member(member.name, .tooManyCombiningMarks(StreamSafeText.maxNonStarterRun)))
            }
            let result: Result<PreferenceValue, PreferenceProblem>
            if let property = property(named: member.name) {
                result = property.rules.check(member.value, depth: depth + 1)
            } else if additionalProperties {
                result = Self.checkUndeclared(member.value, depth: depth + 1)
            } else {
                result = .failure(.undeclaredMember)
            }
            switch result {
            case let .success(value): checked.append(.init(name: member.name, value: value))
            case let .failure(problem): return .failure(.member(member.name, problem))
            }
        }
        for name in required where object[name] == nil {
            return .failure(.member(name, .missingMember))
        }
        return .success(.object(PreferenceObject(sorting: checked)))
    }

    /// A member nobody declared (`additionalProperties: true`): any scalar or object, its strings
    /// bounded and stream-safe like every string, its whole numbers written as integers (so the
    /// value reads back from its JSON text as the same value on every instance).
    static func checkUndeclared(_ value: PreferenceValue, depth: Int) -> Result<PreferenceValue, PreferenceProblem> {
        switch value {
        case .boolean, .integer:
            return .success(value)
        case let .number(d):
            guard d.isFinite else { return .failure(.wrongType(expected: .number)) }
            return .success(PreferenceValue.number(d).coerced(to: .integer) ?? value)
        case .string:
            return ValueRules(type: .string).check(value, depth: depth)
        case let .object(object):
            return ObjectSchema(additionalProperties: true).check(object, depth: depth)
        }
    }

    /// Problems with the declaration (empty when it is sound), each naming the property.
    func declarationProblems(depth: Int) -> [String] {
        var problems: [String] = []
        if depth >= Self.maxDepth { problems.append("objects nest more than \(Self.maxDepth) deep") }
        var seen: Set<String> = []
        for property in properties {
            if !seen.insert(property.name).inserted { problems.append("property \"\(property.name)\" is declared twice") }
            problems += property.declarationProblems(depth: depth + 1).map { "property \"\(property.name)\": " + $0 }
        }
        for name in required where property(named: name) == nil {
            problems.append("required property \"\(name)\" is not declared in \"properties\"")
        }
        return problems
    }
}

/// One declared member of an object preference: its name, rules and optional default (an
/// annotation, as in JSON Schema: a missing member is not filled in).
public struct PropertyDeclaration: Sendable, Hashable {
    public let name: String
    public let rules: ValueRules
    public let description: String?
    public let defaultValue: PreferenceValue?

    public init(name: String, rules: ValueRules, description: String? = nil, defaultValue: PreferenceValue? = nil) {
        self.name = name
        self.rules = rules
        self.description = description
        self.defaultValue = defaultValue
    }

    func declarationProblems(depth: Int) -> [String] {
        var problems = rules.declarationProblems(depth: depth)
        if name.isEmpty { problems.append("the name is empty") }
        if problems.isEmpty, let defaultValue, case let .failure(problem) = rules.check(defaultValue, depth: depth) {
            problems.append("default \(defaultValue) is invalid: \(problem.message)")
        }
        return problems
    }
}
