import Yams

/// Writes a ``YAMLNode`` as YAML through Yams (libyaml): block style, two-space indentation;
/// small collections of scalars on one line in flow style (`[a, b]`, `{$ref: '#/...'}`);
/// multi-line strings as literal blocks; a string plain only when neither YAML 1.2's core schema
/// nor YAML 1.1's (PyYAML's) would read it as another type — libyaml quotes whatever else its
/// syntax needs. ``YAMLParser`` reads the text back to the same tree.
enum YAMLEmitter {
    /// Widest a flow collection may be (its scalars' text) before it is written in block style.
    static let flowWidth = 80

    /// The whole document, ending with a newline.
    static func document(_ root: YAMLNode) -> String {
        do {
            return try Yams.serialize(node: node(root), indent: 2, width: -1, allowUnicode: true)
        } catch {
            // Scalars, sequences and mappings with string keys: libyaml writes every such tree.
            preconditionFailure("libyaml refused a contract tree: \(error)")
        }
    }

    private static func node(_ tree: YAMLNode) -> Node {
        switch tree {
        case let .string(text): return string(text)
        case let .integer(value): return .scalar(Node.Scalar(String(value), YAMLRules.int, .plain))
        case let .number(value): return .scalar(Node.Scalar(number(value), YAMLRules.float, .plain))
        case let .boolean(value): return .scalar(Node.Scalar(value ? "true" : "false", YAMLRules.bool, .plain))
        case .null: return .scalar(Node.Scalar("null", YAMLRules.null, .plain))
        case let .sequence(items):
            return .sequence(Node.Sequence(items.map(node), YAMLRules.seq, isFlow(items) ? .flow : .block))
        case let .mapping(members):
            let pairs = members.map { (string($0.key), node($0.value)) }
            return .mapping(Node.Mapping(pairs, YAMLRules.map, isFlow(members.map(\.value), keys: members.map(\.key)) ? .flow : .block))
        }
    }

    /// Empty collections, and short ones of one-line scalars, go on one line.
    private static func isFlow(_ items: [YAMLNode], keys: [String] = []) -> Bool {
        var width = keys.reduce(0) { $0 + $1.count + 2 }
        for item in items {
            switch item {
            case .sequence, .mapping: return false
            case let .string(text):
                if text.contains("\n") { return false }
                width += text.count + 2
            default: width += 8
            }
        }
        return width <= flowWidth
    }

    /// A string that reads back as this string: literal block for several lines, plain when
    /// no schema types it otherwise, else double-quoted.
    private static func string(_ text: String) -> Node {
        if text.contains("\n"), !text.unicodeScalars.contains(where: { $0 != "\n" && YAMLRules.needsEscape($0) }),
           !text.hasPrefix(" "), !text.hasSuffix("\n\n") {
            return .scalar(Node.Scalar(text, YAMLRules.str, .literal))
        }
        return .scalar(Node.Scalar(text, YAMLRules.str, YAMLRules.isPlainSafe(text) ? .any : .doubleQuoted))
    }

    /// A double as YAML reads it back as a float: `0.0`, `2.5`, `1.0e+16`.
    static func number(_ value: Double) -> String {
        guard value.isFinite else { return value.isNaN ? ".nan" : (value < 0 ? "-.inf" : ".inf") }
        var text = value.description
        if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            // YAML 1.1 needs a `.` in the mantissa and a sign in the exponent to read a float.
            var mantissa = String(text[..<e])
            var exponent = String(text[text.index(after: e)...])
            if !mantissa.contains(".") { mantissa += ".0" }
            if !exponent.hasPrefix("-") && !exponent.hasPrefix("+") { exponent = "+" + exponent }
            text = mantissa + "e" + exponent
        } else if !text.contains(".") {
            text += ".0"
        }
        return text
    }
}
