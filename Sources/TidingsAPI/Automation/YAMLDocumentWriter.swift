import Observing
import Yams

/// Writes documents (`GET /export` with `Accept: application/yaml`) as YAML through Yams, so that
/// ``YAMLDocumentReader`` reads them back to the same values: a string that would read as
/// another type (`"true"`, `"5"`, `"no"`, `""`) is quoted, numbers keep their JSON spelling.
enum YAMLDocumentWriter {
    /// A mapping in the given order.
    static func mapping(_ members: [(String, Node)]) -> Node {
        .mapping(Node.Mapping(members.map { (string($0.0), $0.1) }, YAMLRules.map, .block))
    }

    /// A block sequence.
    static func sequence(_ items: [Node]) -> Node {
        .sequence(Node.Sequence(items, YAMLRules.seq, .block))
    }

    /// A string that reads back as this string under either schema (ours, and YAML 1.1's,
    /// which other tools use): see ``YAMLRules/isPlainSafe(_:)``.
    static func string(_ text: String) -> Node {
        .scalar(Node.Scalar(text, YAMLRules.str, YAMLRules.isPlainSafe(text) ? .any : .doubleQuoted))
    }

    static func integer(_ value: some BinaryInteger) -> Node {
        .scalar(Node.Scalar(String(value), YAMLRules.int, .plain))
    }

    /// A preference value, typed as YAML reads it back.
    static func value(_ value: PreferenceValue) -> Node {
        switch value {
        case let .boolean(flag): .scalar(Node.Scalar(flag ? "true" : "false", YAMLRules.bool, .plain))
        case let .integer(number): integer(number)
        case .number: .scalar(Node.Scalar(EventFrame.json(value), YAMLRules.float, .plain))
        case let .string(text): string(text)
        case let .object(object): mapping(object.members.map { ($0.name, Self.value($0.value)) })
        }
    }

    /// The document's text (UTF-8 kept as is, no line folding, ends with a newline); nil if
    /// libyaml refuses it (it accepts every tree of plain scalars, sequences and mappings).
    static func text(_ node: Node) -> String? {
        try? Yams.serialize(node: node, indent: 2, width: -1, allowUnicode: true)
    }
}
