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
    static func register(preferences: TidingsPreferences, on router: any RouteRegistrar) throws {
        try routes(preferences: preferences)(router)
    }

    /// The declarations checked and the answer encoded once; what it returns registers the
    /// route on a group (once per environment: the declarations are every environment's).
    static func routes(preferences: TidingsPreferences) throws -> @MainActor (any RouteRegistrar) -> Void {
        if preferences.declaration(forKey: "schema") != nil {
            throw StartupError(description: "invalid --preferences file: preference \"schema\": "
                + "the name is reserved (GET /preferences/schema describes the declarations)")
        }
        let body = Array(document(preferences.declarations).utf8)
        let response = Response.json(bytes: body, headers: [.cacheControl: "no-cache", .eTag: ContentTag.of(body)])
        return { router in router.get("/preferences/schema") { _, responder in responder.send(response) } }
    }

    /// `{"key": {"type", "default", "description"?, "minimum"?, "maximum"?, "maxLength"?, "enum"?}}`
    /// in declaration order. Values keep their type in the JSON text (`2.0` for a number).
    static func document(_ declarations: [PreferenceDeclaration]) -> String {
        var document = JSONObjectWriter()
        for declaration in declarations {
            var entry = JSONObjectWriter()
            entry.string("type", declaration.type.rawValue)
            entry.raw("default", JSONObjectWriter.value(declaration.defaultValue))
            if let description = declaration.description { entry.string("description", description) }
            if let minimum = declaration.minimum { entry.raw("minimum", bound(minimum, declaration.type)) }
            if let maximum = declaration.maximum { entry.raw("maximum", bound(maximum, declaration.type)) }
            if let maxLength = declaration.maxLength { entry.raw("maxLength", String(maxLength)) }
            if let allowed = declaration.allowedValues {
                entry.raw("enum", "[" + allowed.map(JSONObjectWriter.value).joined(separator: ",") + "]")
            }
            document.raw(declaration.key, entry.json)
        }
        return document.json
    }

    /// A bound as the type reads it: an integer preference's whole bound without a fraction.
    static func bound(_ value: Double, _ type: PreferenceType) -> String {
        if type == .integer, let whole = Int(exactly: value) { return String(whole) }
        return JSONObjectWriter.number(value)
    }
}
