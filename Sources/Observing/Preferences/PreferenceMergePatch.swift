/// A `PATCH` body of preferences as sent: each key's JSON with its nested nulls, so that an
/// object preference can be merged (JSON merge patch, RFC 7396) onto its current value before
/// it is checked. ``Preferences/resolve(_:)`` turns it into the ``PreferencePatch`` it amounts to.
///
/// ```swift
/// // theme is {"color": "red", "size": 3}
/// let body = try JSONDecoder().decode(PreferenceMergePatch.self, from: #"{"theme": {"size": null}}"#.data(using: .utf8)!)
/// try prefs.propose(prefs.resolve(body).patch)  // theme is {"color": "red"}
/// ```
public struct PreferenceMergePatch: Sendable, Hashable, Decodable {
    public var members: [String: JSONValue]

    public init(_ members: [String: JSONValue]) {
        self.members = members
    }

    public init(from decoder: any Decoder) throws {
        members = try decoder.singleValueContainer().decode([String: JSONValue].self)
    }
}

extension Preferences {
    /// What `mergePatch` amounts to against the current values (RFC 7396, one level down from
    /// the document: the document is the map of every key):
    /// - a key's `null` resets it to its default, as a whole;
    /// - an object sent for an `object` preference is merged onto the key's current value: a
    ///   member's `null` removes the member, an object merges again, anything else replaces it;
    /// - every other value replaces the key's value as it is.
    ///
    /// Nothing is checked here: the result goes to ``validate(_:)`` like any patch, so a merge
    /// that leaves an invalid object is refused naming the key. `merged` names the keys whose
    /// result was computed from their current value (so a writer can require the value is still
    /// the one merged onto, by its revision).
    public func resolve(_ mergePatch: PreferenceMergePatch) -> (patch: PreferencePatch, merged: [String]) {
        var entries: [String: PreferenceInput] = [:]
        var merged: [String] = []
        for (key, json) in mergePatch.members {
            #if DEBUG
            ValueWork.countDecode()
            #endif
            guard case let .object(members) = json, let position = index(ofKey: key),
                  case let .object(target) = current[position] else {
                entries[key] = PreferenceInput(json: json)
                continue
            }
            merged.append(key)
            entries[key] = PreferenceInput(json: JSONValue(target).merging(patch: members))
        }
        return (PreferencePatch(entries), merged)
    }
}

extension PreferenceInput {
    /// A value already parsed as JSON: `null` resets, anything else as the decoder reads it.
    init(json: JSONValue) {
        if case .null = json {
            self = .reset
            return
        }
        switch json.preferenceValueOrProblem() {
        case let .success(value): self = .value(value)
        case let .failure(problem):
            if case .member = problem {
                self = .unsupported(kind: json.typeName, problem: problem)
            } else {
                self = .unsupported(kind: json.typeName)
            }
        }
    }
}

extension JSONValue {
    /// An object preference's value as JSON.
    init(_ object: PreferenceObject) {
        var members: [String: JSONValue] = [:]
        for member in object.members { members[member.name] = JSONValue(member.value) }
        self = .object(members)
    }

    init(_ value: PreferenceValue) {
        switch value {
        case let .boolean(b): self = .bool(b)
        case let .integer(i): self = .integer(Int64(i))
        case let .number(d): self = .number(d)
        case let .string(s): self = .string(s)
        case let .object(o): self.init(o)
        }
    }

    /// RFC 7396's MergePatch(self, patch) for an object patch: a member's null removes it, an
    /// object member merges onto the member of the same name (onto `{}` when that is not an
    /// object), any other member replaces. Recursion is as deep as the patch, which the JSON
    /// decoder bounded.
    func merging(patch: [String: JSONValue]) -> JSONValue {
        guard case var .object(target) = self else { return JSONValue.object([:]).merging(patch: patch) }
        for (name, value) in patch {
            switch value {
            case .null: target[name] = nil
            case let .object(inner): target[name] = (target[name] ?? .object([:])).merging(patch: inner)
            default: target[name] = value
            }
        }
        return .object(target)
    }
}
