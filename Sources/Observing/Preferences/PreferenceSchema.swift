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
    /// `{"key": {"type", "default", "description"?, "minimum"?, "maximum"?, "maxLength"?, "enum"?}}`.
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

    private static let knownFields: Set<String> = ["type", "default", "description", "minimum", "maximum", "maxLength", "enum"]

    private static func declaration(key: String, entry: JSONValue) throws(PreferenceSchemaError) -> PreferenceDeclaration {
        func fail(_ problem: String) -> PreferenceSchemaError { PreferenceSchemaError(key: key, problem: problem) }
        guard case let .object(fields) = entry else { throw fail("expected an object with \"type\" and \"default\", got \(entry.typeName)") }
        if let unknown = fields.keys.sorted().first(where: { !knownFields.contains($0) }) {
            throw fail("unknown field \"\(unknown)\" (known: \(knownFields.sorted().joined(separator: ", ")))")
        }
        guard let typeField = fields["type"] else { throw fail("missing \"type\"") }
        guard case let .string(typeName) = typeField else { throw fail("\"type\" must be a string") }
        guard let type = PreferenceType(rawValue: typeName) else {
            throw fail("unknown type \"\(typeName)\" (expected boolean, integer, number or string)")
        }
        guard let defaultField = fields["default"] else { throw fail("missing \"default\"") }
        guard let rawDefault = defaultField.preferenceValue else { throw fail("\"default\" must be a \(type), got \(defaultField.typeName)") }
        guard let defaultValue = rawDefault.coerced(to: type) else {
            throw fail("default \(rawDefault) is not of type \(type)")
        }
        var description: String?
        switch fields["description"] {
        case nil, .null?: break
        case let .string(s)?: description = s
        default: throw fail("\"description\" must be a string")
        }
        func number(_ name: String) throws(PreferenceSchemaError) -> Double? {
            switch fields[name] {
            case nil, .null?: return nil
            case let v?: if let n = v.preferenceValue?.numericValue { return n }
            }
            throw fail("\"\(name)\" must be a number")
        }
        let minimum = try number("minimum")
        let maximum = try number("maximum")
        var maxLength: Int?
        switch fields["maxLength"] {
        case nil, .null?: break
        case let v?:
            guard case let .integer(n)? = v.preferenceValue?.coerced(to: .integer) else { throw fail("\"maxLength\" must be an integer") }
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
                    throw fail("enum value \(shown) is not of type \(type)")
                }
                allowed?.append(typed)
            }
        default: throw fail("\"enum\" must be an array")
        }
        let declaration = PreferenceDeclaration(
            key: key, type: type, defaultValue: defaultValue, description: description,
            minimum: minimum, maximum: maximum, maxLength: maxLength, allowedValues: allowed)
        if let problem = declaration.declarationProblems().first { throw fail(problem) }
        return declaration
    }
}
