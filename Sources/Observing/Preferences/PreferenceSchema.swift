public import Foundation

/// A problem in a preferences schema file; `description` names the key and the problem,
/// e.g. `preference "age": default 1.5 is invalid: expected a value of type integer`.
public struct PreferenceSchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The key at fault, or nil when the document as a whole is wrong.
    public let key: String?
    public let problem: String
    public init(key: String?, problem: String) {
        self.key = key
        self.problem = problem
    }
    public var description: String {
        if let key { return "preference \"\(key)\": \(problem)" }
        return "preferences schema: \(problem)"
    }
}

extension PreferenceDeclaration {
    /// Reads the `--preferences FILE` format:
    /// `{"key": {"type", "default", "description"?, "minimum"?, "maximum"?, "maxLength"?, "enum"?}}`;
    /// an `object` type also takes `properties` (each `{"type", ...}` as above, `default`
    /// optional, or an object again), `required` and `additionalProperties` (default false).
    /// Declarations come back sorted by key. The first problem found is thrown (keys are
    /// checked in sorted order, so the message is stable).
    public static func schema(fromJSON data: Data) throws(PreferenceSchemaError) -> [PreferenceDeclaration] {
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw PreferenceSchemaError(key: nil, problem: "not valid JSON (\(error))")
        }
        guard case let .object(entries) = document else {
            throw PreferenceSchemaError(key: nil, problem: "expected a JSON object of preferences, got \(document.typeName)")
        }
        guard !entries.isEmpty else { throw PreferenceSchemaError(key: nil, problem: "declares no preferences") }
        var declarations: [PreferenceDeclaration] = []
        for key in entries.keys.sorted() {
            declarations.append(try declaration(key: key, entry: entries[key]!))
        }
        return declarations
    }

    private static let knownFields: Set<String> = [
        "type", "default", "description", "minimum", "maximum", "maxLength", "enum",
        "properties", "required", "additionalProperties",
    ]

    private static func declaration(key: String, entry: JSONValue) throws(PreferenceSchemaError) -> PreferenceDeclaration {
        func fail(_ problem: String) -> PreferenceSchemaError { PreferenceSchemaError(key: key, problem: problem) }
        guard case let .object(fields) = entry else { throw fail("expected an object with \"type\" and \"default\", got \(entry.typeName)") }
        let parsed: ParsedRules
        do throws(SchemaProblem) {
            parsed = try rules(fields, depth: 0, defaultRequired: true)
        } catch {
            throw fail(error.text)
        }
        let declaration = PreferenceDeclaration(
            key: key, type: parsed.rules.type, defaultValue: parsed.defaultValue!, description: parsed.description,
            minimum: parsed.rules.minimum, maximum: parsed.rules.maximum, maxLength: parsed.rules.maxLength,
            allowedValues: parsed.rules.allowedValues, object: parsed.rules.object)
        if let problem = declaration.declarationProblems().first { throw fail(problem) }
        return declaration
    }

    /// A problem found while reading one declaration (the key is added by the caller).
    private struct SchemaProblem: Error {
        let text: String
        init(_ text: String) { self.text = text }
        /// The same problem, inside property `name`.
        func inside(_ name: String) -> SchemaProblem { SchemaProblem("property \"\(name)\": " + text) }
    }

    private struct ParsedRules {
        let rules: ValueRules
        let defaultValue: PreferenceValue?
        let description: String?
    }

    /// One declaration's fields (a preference's, or a property's of an object preference, where
    /// `default` is optional): type, constraints, members.
    private static func rules(_ fields: [String: JSONValue], depth: Int, defaultRequired: Bool) throws(SchemaProblem) -> ParsedRules {
        typealias Problem = SchemaProblem
        if let unknown = fields.keys.sorted().first(where: { !knownFields.contains($0) }) {
            throw Problem("unknown field \"\(unknown)\" (known: \(knownFields.sorted().joined(separator: ", ")))")
        }
        guard let typeField = fields["type"] else { throw Problem("missing \"type\"") }
        guard case let .string(typeName) = typeField else { throw Problem("\"type\" must be a string") }
        guard let type = PreferenceType(rawValue: typeName) else {
            throw Problem("unknown type \"\(typeName)\" (expected boolean, integer, number, string or object)")
        }
        var defaultValue: PreferenceValue?
        switch fields["default"] {
        case nil:
            if defaultRequired { throw Problem("missing \"default\"") }
        case let defaultField?:
            let rawDefault: PreferenceValue
            switch defaultField.preferenceValueOrProblem() {
            case let .success(value): rawDefault = value
            case let .failure(problem):
                if case .member = problem { throw Problem("default is invalid: \(problem.message)") }
                throw Problem("\"default\" must be a \(type), got \(defaultField.typeName)")
            }
            // An object default is checked against its members once they are read (below).
            guard let typed = rawDefault.coerced(to: type) else { throw Problem("default \(rawDefault) is not of type \(type)") }
            defaultValue = typed
        }
        var description: String?
        switch fields["description"] {
        case nil, .null?: break
        case let .string(s)?: description = s
        default: throw Problem("\"description\" must be a string")
        }
        func number(_ name: String) throws(Problem) -> Double? {
            switch fields[name] {
            case nil, .null?: return nil
            case let v?: if let n = v.preferenceValue?.numericValue { return n }
            }
            throw Problem("\"\(name)\" must be a number")
        }
        let minimum = try number("minimum")
        let maximum = try number("maximum")
        var maxLength: Int?
        switch fields["maxLength"] {
        case nil, .null?: break
        case let v?:
            guard case let .integer(n)? = v.preferenceValue?.coerced(to: .integer) else { throw Problem("\"maxLength\" must be an integer") }
            maxLength = n
        }
        var allowed: [PreferenceValue]?
        switch fields["enum"] {
        case nil, .null?: break
        case let .array(items)?:
            allowed = []
            for item in items {
                guard let v = item.preferenceValue, let typed = v.coerced(to: type) else {
                    let shown = item.preferenceValue?.description ?? item.typeName
                    throw Problem("enum value \(shown) is not of type \(type)")
                }
                allowed?.append(typed)
            }
        default: throw Problem("\"enum\" must be an array")
        }
        let object = try objectSchema(fields, type: type, depth: depth)
        let rules = ValueRules(type: type, minimum: minimum, maximum: maximum, maxLength: maxLength,
                               allowedValues: allowed, object: object)
        // An object default as its members' types read it (`1` for a number member is `1.0`); one
        // that does not fit is reported by the declaration's own check.
        if let value = defaultValue, case let .success(typed) = rules.check(value, depth: depth) { defaultValue = typed }
        return ParsedRules(rules: rules, defaultValue: defaultValue, description: description)
    }

    /// `properties`, `required` and `additionalProperties` (nil when none is given and the type is
    /// not object; the declaration's own check then refuses them on other types).
    private static func objectSchema(_ fields: [String: JSONValue], type: PreferenceType, depth: Int) throws(SchemaProblem) -> ObjectSchema? {
        typealias Problem = SchemaProblem
        let given = ["properties", "required", "additionalProperties"].contains { fields[$0] != nil }
        guard type == .object || given else { return nil }
        guard type == .object else {
            throw Problem("properties, required and additionalProperties apply only to object preferences, not \(type)")
        }
        guard depth < ObjectSchema.maxDepth else { throw Problem("objects nest more than \(ObjectSchema.maxDepth) deep") }
        var properties: [PropertyDeclaration] = []
        switch fields["properties"] {
        case nil: break
        case let .object(entries)?:
            for name in entries.keys.sorted() {
                guard case let .object(propertyFields) = entries[name]! else {
                    throw Problem("expected an object with \"type\", got \(entries[name]!.typeName)").inside(name)
                }
                do throws(Problem) {
                    let parsed = try rules(propertyFields, depth: depth + 1, defaultRequired: false)
                    properties.append(PropertyDeclaration(name: name, rules: parsed.rules, description: parsed.description,
                                                          defaultValue: parsed.defaultValue))
                } catch {
                    throw error.inside(name)
                }
            }
        default: throw Problem("\"properties\" must be an object")
        }
        var required: [String] = []
        switch fields["required"] {
        case nil: break
        case let .array(items)?:
            for item in items {
                guard case let .string(name) = item else { throw Problem("\"required\" must list property names (strings)") }
                guard !required.contains(name) else { throw Problem("\"required\" lists \"\(name)\" twice") }
                required.append(name)
            }
        default: throw Problem("\"required\" must be an array of property names")
        }
        var additional = false
        switch fields["additionalProperties"] {
        case nil: break
        case let .bool(b)?: additional = b
        default: throw Problem("\"additionalProperties\" must be true or false")
        }
        return ObjectSchema(properties: properties, required: required, additionalProperties: additional)
    }
}
