import Foundation
import Observing

/// The parts of the served contract that one declared preference decides: its value schema
/// (type, `minimum`, `maximum`, `maxLength`, `enum`) and the schemas and examples built on it.
struct PreferenceContract {
    let declaration: PreferenceDeclaration

    var key: String { declaration.key }

    func operationId(_ base: String) -> String { base + "." + key }

    var valueName: String { "PreferenceValue." + key }
    var recordName: String { "PreferenceRecord." + key }
    var writeName: String { "PreferenceWrite." + key }
    var eventName: String { "PreferenceEvent." + key }
    var streamEventName: String { "StreamEvent." + key }
    var streamResponseName: String { "EventStream." + key }
    var valueRef: String { "#/components/schemas/" + valueName }
    var streamResponseRef: String { "#/components/responses/" + streamResponseName }
    var recordRef: String { "#/components/schemas/" + recordName }
    var writeRef: String { "#/components/schemas/" + writeName }

    /// A value as YAML writes it, keeping its type (`2.0` for a number).
    static func node(_ value: PreferenceValue) -> YAMLNode {
        switch value {
        case let .boolean(b): .boolean(b)
        case let .integer(i): .integer(i)
        case let .number(d): .number(d)
        case let .string(s): .string(s)
        case let .object(o): .map(o.members.map { ($0.name, node($0.value)) })
        }
    }

    /// A bound as the type reads it (whole bounds of an integer without a fraction).
    private static func bound(_ value: Double, _ type: PreferenceType) -> YAMLNode {
        if type == .integer, let whole = Int(exactly: value) { return .integer(whole) }
        return .number(value)
    }

    /// The constraints after `type`: what the server enforces, including its own limit on integers
    /// (signed 64-bit), and on strings without their own `maxLength` (65,536 scalars, openapi.yaml
    /// "Sizes"); an object's members, each described the same way.
    static func constraints(_ rules: ValueRules) -> [(String, YAMLNode)] {
        var members: [(String, YAMLNode)] = []
        switch rules.type {
        case .integer:
            members.append(("minimum", rules.minimum.map { bound($0, .integer) } ?? .integer(Int.min)))
            members.append(("maximum", rules.maximum.map { bound($0, .integer) } ?? .integer(Int.max)))
        case .number:
            if let minimum = rules.minimum { members.append(("minimum", bound(minimum, .number))) }
            if let maximum = rules.maximum { members.append(("maximum", bound(maximum, .number))) }
        case .string:
            members.append(("maxLength", .integer(rules.maxLength ?? PreferenceDeclaration.defaultMaxLength)))
        case .object:
            let object = rules.object ?? ObjectSchema()
            members.append(("properties", .map(object.properties.map { property in
                var schema: [(String, YAMLNode)] = [("type", .string(property.rules.type.rawValue))]
                schema += constraints(property.rules)
                if let allowed = property.rules.allowedValues { schema.append(("enum", .sequence(allowed.map(node)))) }
                if let description = property.description { schema.append(("description", .string(description))) }
                if let value = property.defaultValue { schema.append(("default", node(value))) }
                return (property.name, .map(schema))
            })))
            if !object.required.isEmpty { members.append(("required", .strings(object.required))) }
            // Members nobody declared may be any preference value (no arrays, no null).
            members.append(("additionalProperties",
                            object.additionalProperties ? .ref("#/components/schemas/PreferenceValue") : .boolean(false)))
        case .boolean:
            break
        }
        return members
    }

    /// `components.schemas.PreferenceValue.<key>`.
    var valueSchema: YAMLNode {
        var members: [(String, YAMLNode)] = [("type", .string(declaration.type.rawValue))]
        members += Self.constraints(declaration.rules)
        if let allowed = declaration.allowedValues { members.append(("enum", .sequence(allowed.map(Self.node)))) }
        var description = declaration.description
        if declaration.type == .object {
            let bound = "At most \(ObjectSchema.maxBytes) bytes as JSON; objects nest at most \(ObjectSchema.maxDepth) deep."
            description = description.map { $0 + " " + bound } ?? bound
        }
        if let description { members.append(("description", .string(description))) }
        members.append(("default", Self.node(declaration.defaultValue)))
        return .map(members)
    }

    /// The key's member of `PreferencesPatch`: its value, or `null` to reset it; for an object,
    /// a merge patch of its members (``patchConstraints(_:)``).
    var patchSchema: YAMLNode {
        var members: [(String, YAMLNode)] = [("type", .strings([declaration.type.rawValue, "null"]))]
        if declaration.type == .object {
            members += Self.patchConstraints(declaration.rules)
            members.append(("description", .string(
                "Merged onto the current value (JSON merge patch, RFC 7396): a member's `null` removes it, an object "
                + "merges into the member's object, any other value replaces it. The result must be a valid value "
                + "(else 422 naming the key); `null` for the whole key resets it to its default.")))
        } else {
            members += Self.constraints(declaration.rules)
        }
        if let allowed = declaration.allowedValues {
            members.append(("enum", .sequence(allowed.map(Self.node) + [.null])))
        }
        return .map(members)
    }

    /// An object's members as a merge patch sends them: each optional and nullable (`null`
    /// removes it), an object member a merge patch again; no member is required, since a merge
    /// keeps what the patch leaves out (whether the result has them is checked on the result).
    static func patchConstraints(_ rules: ValueRules) -> [(String, YAMLNode)] {
        let object = rules.object ?? ObjectSchema()
        let properties: [(String, YAMLNode)] = object.properties.map { property in
            var schema: [(String, YAMLNode)] = [("type", .strings([property.rules.type.rawValue, "null"]))]
            schema += property.rules.type == .object ? patchConstraints(property.rules) : constraints(property.rules)
            if let allowed = property.rules.allowedValues { schema.append(("enum", .sequence(allowed.map(node) + [.null]))) }
            if let description = property.description { schema.append(("description", .string(description))) }
            return (property.name, .map(schema))
        }
        let additional: YAMLNode = object.additionalProperties
            ? .map([("oneOf", .sequence([.ref("#/components/schemas/PreferenceValue"), .map([("type", .string("null"))])]))])
            : .boolean(false)
        return [("properties", .map(properties)), ("additionalProperties", additional)]
    }

    /// `components.schemas.PreferenceRecord.<key>`: the answer of GET/PUT/DELETE.
    var recordSchema: YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["key", "value", "default", "type", "revision"])),
            ("properties", .map([
                ("key", .map([("type", .string("string")), ("const", .string(key))])),
                ("value", .ref(valueRef)),
                ("default", .ref(valueRef)),
                ("type", .map([("type", .string("string")), ("const", .string(declaration.type.rawValue))])),
                ("revision", .map([
                    ("type", .string("integer")), ("minimum", .integer(0)),
                    ("description", .string("Revision of the last change to this key; 0 when never set.")),
                ])),
            ])),
        ])
    }

    /// `components.schemas.PreferenceWrite.<key>`: the body of PUT.
    var writeSchema: YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["value"])),
            ("properties", .map([("value", .ref(valueRef))])),
        ])
    }

    /// `components.schemas.PreferenceEvent.<key>`: `data` of this key's `preference` event.
    var eventSchema: YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["key", "value", "revision"])),
            ("properties", .map([
                ("key", .map([("type", .string("string")), ("const", .string(key))])),
                ("value", .ref(valueRef)),
                ("revision", .map([("type", .string("integer")), ("minimum", .integer(0))])),
            ])),
        ])
    }

    /// `components.schemas.StreamEvent.<key>`: an event of `/preferences/<key>/events`.
    var streamEventSchema: YAMLNode {
        func data(_ schema: String) -> YAMLNode { .map([("contentSchema", .ref("#/components/schemas/" + schema))]) }
        return .map([
            ("type", .string("object")),
            ("required", .strings(["event", "data", "id"])),
            ("properties", .map([
                ("id", .map([("type", .string("string")), ("pattern", .string("^[0-9]{1,20}$"))])),
                ("event", .map([("type", .string("string")), ("enum", .strings(["preference", "reset"]))])),
                ("data", .map([("type", .string("string")), ("contentMediaType", .string("application/json"))])),
                ("retry", .map([("type", .string("integer")), ("minimum", .integer(0))])),
            ])),
            ("oneOf", .sequence([
                .map([("properties", .map([("event", .map([("const", .string("preference"))])), ("data", data(eventName))]))]),
                .map([("properties", .map([("event", .map([("const", .string("reset"))])), ("data", data("ResetEvent"))]))]),
            ])),
        ])
    }

    /// `components.responses.EventStream.<key>`: the generic stream answer, with this key's events.
    func streamResponse(_ generic: YAMLNode) -> YAMLNode {
        let snapshot = EventFrame.frame(id: 0, event: "preference",
                                        data: PreferenceEventData(key: key, value: declaration.defaultValue, revision: 0))
        let example = "retry: 3000\n\n" + String(decoding: snapshot, as: UTF8.self)
        let media = (generic["content"]?["text/event-stream"] ?? .map([]))
            .setting("schema", .ref("#/components/schemas/" + streamEventName))
            .setting("example", .string(example))
        let content = (generic["content"] ?? .map([])).setting("text/event-stream", media)
        return generic.setting("content", content)
            .setting("description", .string("The event stream of `\(key)`: `preference` events of this key (and `reset`); "
                + "framing, snapshot, resume, heartbeat and limits as in `EventStream`."))
    }

    var recordExample: YAMLNode {
        let value = Self.node(declaration.defaultValue)
        return .map([("key", .string(key)), ("value", value), ("default", value),
                     ("type", .string(declaration.type.rawValue)), ("revision", .integer(0))])
    }

    var writeExample: YAMLNode { .map([("value", Self.node(declaration.defaultValue))]) }

    /// This key's members of `components.schemas`.
    var schemas: [(String, YAMLNode)] {
        [(valueName, valueSchema), (recordName, recordSchema), (writeName, writeSchema),
         (eventName, eventSchema), (streamEventName, streamEventSchema)]
    }
}

/// The parts of the served contract that the whole declared set decides.
struct PreferencesContract {
    let preferences: [PreferenceContract]

    init(_ declarations: [PreferenceDeclaration]) {
        preferences = declarations.map(PreferenceContract.init)
    }

    var keys: [String] { preferences.map(\.key) }

    /// Every key with its default, as `GET /preferences` answers on a fresh server.
    var valuesExample: YAMLNode { .map(preferences.map { ($0.key, PreferenceContract.node($0.declaration.defaultValue)) }) }

    /// A patch that resets the first key and sets the second to its default.
    var patchExample: YAMLNode {
        .map(preferences.prefix(2).enumerated().map { index, p in
            (p.key, index == 0 ? .null : PreferenceContract.node(p.declaration.defaultValue))
        })
    }

    /// `components.parameters.StreamKeys.schema.pattern`: a comma-separated list of declared keys, exactly.
    var streamKeysPattern: String {
        // Keys are `[A-Za-z_][A-Za-z0-9_.-]*`: only `.` needs escaping in a pattern.
        let key = "(" + keys.map { $0.replacingOccurrences(of: ".", with: "\\.") }.joined(separator: "|") + ")"
        return "^" + key + "(," + key + ")*$"
    }

    /// `properties` of `components.schemas.PreferenceMap`: every declared key with its value.
    var mapProperties: YAMLNode { .map(preferences.map { ($0.key, .ref($0.valueRef)) }) }

    /// `properties` of `components.schemas.PreferencesPatch`: each key's value, or `null`.
    var patchProperties: YAMLNode { .map(preferences.map { ($0.key, $0.patchSchema) }) }

    /// `properties` of `components.schemas.PreferenceDeclarations` (`GET /preferences/schema`).
    var declarationsProperties: YAMLNode {
        .map(preferences.map { ($0.key, .ref("#/components/schemas/PreferenceDeclaration")) })
    }

    /// The `GET /preferences/schema` example: the declarations themselves.
    var declarationsExample: YAMLNode {
        .map(preferences.map { p in
            let d = p.declaration
            var members: [(String, YAMLNode)] = [("type", .string(d.type.rawValue)), ("default", PreferenceContract.node(d.defaultValue))]
            if let description = d.description { members.append(("description", .string(description))) }
            if let minimum = d.minimum { members.append(("minimum", d.type == .integer && Int(exactly: minimum) != nil ? .integer(Int(minimum)) : .number(minimum))) }
            if let maximum = d.maximum { members.append(("maximum", d.type == .integer && Int(exactly: maximum) != nil ? .integer(Int(maximum)) : .number(maximum))) }
            if let maxLength = d.maxLength { members.append(("maxLength", .integer(maxLength))) }
            if let allowed = d.allowedValues { members.append(("enum", .sequence(allowed.map(PreferenceContract.node)))) }
            if let object = d.object {
                // The file format's own words (as `GET /preferences/schema` answers).
                for (name, node) in PreferenceContract.constraints(d.rules) {
                    let shown: YAMLNode = name == "additionalProperties" ? .boolean(object.additionalProperties) : node
                    members.append((name, shown))
                }
            }
            return (p.key, .map(members))
        })
    }
}
