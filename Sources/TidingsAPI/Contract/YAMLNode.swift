/// A YAML document as a tree: what the served contract (`GET /openapi.yaml`) is built as, before
/// ``YAMLEmitter`` writes it. Mappings keep their members in order, so the document reads in the
/// order it is declared.
indirect enum YAMLNode: Equatable, Sendable {
    case string(String)
    case integer(Int)
    case number(Double)
    case boolean(Bool)
    case null
    case sequence([YAMLNode])
    case mapping([Member])

    /// One `key: value` of a mapping.
    struct Member: Equatable, Sendable {
        let key: String
        let value: YAMLNode
    }

    /// A mapping from `(key, value)` pairs, in order.
    static func map(_ members: [(String, YAMLNode)]) -> YAMLNode {
        .mapping(members.map { Member(key: $0.0, value: $0.1) })
    }

    /// A sequence of strings (tags, `required`, enums of names).
    static func strings(_ items: [String]) -> YAMLNode { .sequence(items.map(YAMLNode.string)) }

    /// `{ $ref: "#/components/<section>/<name>" }`.
    static func ref(_ pointer: String) -> YAMLNode { .map([("$ref", .string(pointer))]) }

    /// The value of `key` in a mapping (nil for a missing key or another kind of node).
    subscript(key: String) -> YAMLNode? {
        guard case let .mapping(members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// This mapping with `key` set: replaced in place when present, appended otherwise.
    func setting(_ key: String, _ value: YAMLNode) -> YAMLNode {
        guard case var .mapping(members) = self else { return self }
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index] = Member(key: key, value: value)
        } else {
            members.append(Member(key: key, value: value))
        }
        return .mapping(members)
    }
}
