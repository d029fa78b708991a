public import Observing

/// Namespace of the pieces of the served contract that the declared preferences decide
/// (Contract/*.swift). The fixed rest is `openapi.base.yaml`; to change it, edit that file and
/// regenerate the repository's copy with `scripts/write-openapi.sh` (an end-to-end test and
/// `scripts/write-openapi.sh --check` keep the two equal).
enum OpenAPIContract {}

/// The HTTP contract of a running server (`GET /openapi.yaml`): `openapi.base.yaml` with, merged
/// in, what its preference declarations decide — every declared key gets its own paths and exact
/// value schemas — and the `/environments/{env}` family of every environment's paths.
public enum OpenAPIDocument {
    /// The YAML text for `declarations` (ends with a newline).
    public static func yaml(for declarations: [PreferenceDeclaration]) -> String {
        YAMLEmitter.document(tree(for: declarations))
    }

    /// `openapi.base.yaml` as embedded in the binary, read. It is part of the program, not input:
    /// a file that does not read stops the server at start (and fails `OpenAPIBaseTests` first).
    static let base: YAMLNode = {
        do {
            return try YAMLParser.parse(PackageResources.openapi_base_yaml)
        } catch {
            preconditionFailure("openapi.base.yaml, \(error)")
        }
    }()

    /// The document as a tree.
    static func tree(for declarations: [PreferenceDeclaration]) -> YAMLNode {
        let all = PreferencesContract(declarations)
        let keys = YAMLNode.strings(all.keys)
        var document = base
        let slots: [([String], YAMLNode)] = [
            (["paths", "/preferences", "get", "responses", "200", "content", "application/json", "example"], all.valuesExample),
            (["paths", "/preferences", "patch", "requestBody", "content", "application/json", "example"], all.patchExample),
            (["paths", "/preferences/schema", "get", "responses", "200", "content", "application/json", "example"], all.declarationsExample),
            (["paths", "/ofrep/v1/evaluate/flags/{key}", "post", "parameters", "0", "schema", "enum"], keys),
            (["components", "parameters", "StreamKeys", "schema", "pattern"], .string(all.streamKeysPattern)),
            (["components", "schemas", "PreferenceMap", "required"], keys),
            (["components", "schemas", "PreferenceMap", "properties"], all.mapProperties),
            (["components", "schemas", "PreferencesPatch", "properties"], all.patchProperties),
            (["components", "schemas", "PreferenceDeclarations", "required"], keys),
            (["components", "schemas", "PreferenceDeclarations", "properties"], all.declarationsProperties),
            (["components", "schemas", "PreferencesRollback", "properties", "keys", "items", "enum"], keys),
            (["components", "schemas", "Promote", "properties", "keys", "items", "enum"], keys),
        ]
        for (path, value) in slots { document = document.filling(path, with: value) }

        let historyTemplate = document.at(["paths", "/things/history"])
        let genericStream = document.at(["components", "responses", "EventStream"])
        var paths: [(String, YAMLNode)] = []
        var schemas: [(String, YAMLNode)] = []
        var responses: [(String, YAMLNode)] = []
        for preference in all.preferences {
            paths += preference.pathItems(historyTemplate: historyTemplate)
            schemas += preference.schemas
            responses.append((preference.streamResponseName, preference.streamResponse(genericStream)))
        }
        document = document
            .inserting(paths, at: ["paths"], after: "/preferences/events")
            .inserting(schemas, at: ["components", "schemas"], after: "PreferenceDeclarations")
            .inserting(responses, at: ["components", "responses"], after: "EventStream")
        // Every environment's paths, once, under `/environments/{env}` (EnvironmentPaths.swift).
        return document.filling(["paths"], with: OpenAPIContract.addingEnvironments(to: document.at(["paths"])))
    }
}

extension YAMLNode {
    /// The node at `path` (mapping keys; a sequence's index as digits). The paths used here name
    /// members of `openapi.base.yaml`: a missing one is a programmer's error, caught by every test
    /// that builds the contract.
    func at(_ path: [String]) -> YAMLNode {
        var node = self
        for step in path { node = node.child(step, in: path) }
        return node
    }

    /// This tree with the member at `path` (which must exist) replaced by `value`, in place.
    func filling(_ path: [String], with value: YAMLNode) -> YAMLNode {
        guard let step = path.first else { return value }
        let rest = Array(path.dropFirst())
        switch self {
        case let .mapping(members):
            guard let index = members.firstIndex(where: { $0.key == step }) else { missing(path) }
            var members = members
            members[index] = Member(key: step, value: members[index].value.filling(rest, with: value))
            return .mapping(members)
        case let .sequence(items):
            guard let index = Int(step), items.indices.contains(index) else { missing(path) }
            var items = items
            items[index] = items[index].filling(rest, with: value)
            return .sequence(items)
        default:
            missing(path)
        }
    }

    /// This tree with `members` added to the mapping at `path`, right after its member `key`.
    func inserting(_ members: [(String, YAMLNode)], at path: [String], after key: String) -> YAMLNode {
        guard case var .mapping(existing) = at(path),
              let index = existing.firstIndex(where: { $0.key == key }) else { missing(path + [key]) }
        existing.insert(contentsOf: members.map { Member(key: $0.0, value: $0.1) }, at: index + 1)
        return filling(path, with: .mapping(existing))
    }

    private func child(_ step: String, in path: [String]) -> YAMLNode {
        if case let .sequence(items) = self, let index = Int(step), items.indices.contains(index) { return items[index] }
        guard let value = self[step] else { missing(path) }
        return value
    }

    private func missing(_ path: [String]) -> Never {
        preconditionFailure("openapi.base.yaml has no \(path.joined(separator: " › ")) to merge into")
    }
}
