import HTTPTypes
import EventHTTP
import Observing

/// `GET /preferences/schema`: the running declarations in the `--preferences` file format (also
/// for the built-in set), so a client discovers every key, its type, default and constraints, and
/// the answer can be saved and passed back as `--preferences`. Fixed for the process's lifetime,
/// so it is encoded once.
@MainActor
enum PreferenceSchemaRoute {
    /// Registers the route. A declared key named `schema` would be hidden behind it (readable only
    /// through `GET /preferences`), so such a file stops start-up like any other bad declaration.
    static func register(preferences: TidingsPreferences, on router: RouteGroup) throws {
        if preferences.declaration(forKey: "schema") != nil {
            throw StartupError(description: "invalid --preferences file: preference \"schema\": "
                + "the name is reserved (GET /preferences/schema describes the declarations)")
        }
        let body = Array(document(preferences.declarations).utf8)
        let response = Response.json(bytes: body, headers: [.cacheControl: "no-cache", .eTag: ContentTag.of(body)])
        router.get("/preferences/schema") { _, responder in responder.send(response) }
    }

    /// `{"key": {"type", "default", "description"?, "minimum"?, "maximum"?, "maxLength"?, "enum"?,
    /// "properties"?, "required"?, "additionalProperties"?}}` in declaration order. Values keep
    /// their type in the JSON text (`2.0` for a number).
    static func document(_ declarations: [PreferenceDeclaration]) -> String {
        var document = JSONObjectWriter()
        for declaration in declarations {
            document.raw(declaration.key, declarationEntry(declaration.rules, default: declaration.defaultValue,
                                                description: declaration.description))
        }
        return document.json
    }

    /// One declaration (a preference's, or a property's of an object preference) in the file format.
    private static func declarationEntry(_ rules: ValueRules, default defaultValue: PreferenceValue?, description: String?) -> String {
        var entry = JSONObjectWriter()
        entry.string("type", rules.type.rawValue)
        if let defaultValue { entry.raw("default", JSONObjectWriter.value(defaultValue)) }
        if let description { entry.string("description", description) }
        if let minimum = rules.minimum { entry.raw("minimum", bound(minimum, rules.type)) }
        if let maximum = rules.maximum { entry.raw("maximum", bound(maximum, rules.type)) }
        if let maxLength = rules.maxLength { entry.raw("maxLength", String(maxLength)) }
        if let allowed = rules.allowedValues {
            entry.raw("enum", "[" + allowed.map(JSONObjectWriter.value).joined(separator: ",") + "]")
        }
        if let object = rules.object {
            var properties = JSONObjectWriter()
            for property in object.properties {
                properties.raw(property.name, declarationEntry(property.rules, default: property.defaultValue, description: property.description))
            }
            entry.raw("properties", properties.json)
            entry.raw("required", "[" + object.required.map { EventFrame.json($0) }.joined(separator: ",") + "]")
            entry.raw("additionalProperties", object.additionalProperties ? "true" : "false")
        }
        return entry.json
    }

    /// A bound as the type reads it: an integer preference's whole bound without a fraction.
    static func bound(_ value: Double, _ type: PreferenceType) -> String {
        if type == .integer, let whole = Int(exactly: value) { return String(whole) }
        return JSONObjectWriter.number(value)
    }
}
