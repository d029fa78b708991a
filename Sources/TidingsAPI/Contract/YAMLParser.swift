import Yams

/// Reads YAML — `openapi.base.yaml`, and what ``YAMLEmitter`` writes — into a ``YAMLNode``,
/// through Yams (libyaml). Scalars are typed by YAML 1.2's core schema
/// (``YAMLRules/coreSchema``): `true`/`false`, integers, floats, `null`/`~`, the rest
/// strings. Mappings keep their order. The same bounds as request bodies apply
/// (``YAMLRules/checkShape(_:)``: no anchors or aliases, bounded nesting), so any text
/// reads or is refused with its line, never a trap.
enum YAMLParser {
    /// Why a text was refused, and where (1-based line).
    struct Failure: Error, Equatable, CustomStringConvertible {
        let line: Int
        let message: String
        var description: String { "line \(line): \(message)" }
    }

    static func parse(_ text: String) throws(Failure) -> YAMLNode {
        try parse(Array(text.utf8))
    }

    static func parse(_ bytes: [UInt8]) throws(Failure) -> YAMLNode {
        guard let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
            throw Failure(line: 1, message: "not UTF-8 text")
        }
        do throws(YAMLRules.Refusal) { try YAMLRules.checkShape(bytes) } catch {
            throw Failure(line: 1, message: error.detail)
        }
        let root: Node?
        do {
            root = try Parser(yaml: text, resolver: YAMLRules.coreSchema, constructor: .default, encoding: .utf8).singleRoot()
        } catch {
            throw failure(error, lines: lineCount(bytes))
        }
        guard let root else { return .null }
        return try node(root)
    }

    private static func node(_ node: Node) throws(Failure) -> YAMLNode {
        switch node {
        case let .scalar(scalar):
            let text = scalar.string
            switch Tag.Name(rawValue: node.tag.rawValue) {
            case .null: return .null
            case .bool: return .boolean(text.lowercased() == "true")
            case .int:
                if let value = Int(text.hasPrefix("+") ? String(text.dropFirst()) : text) { return .integer(value) }
                if text.hasPrefix("0x"), let value = Int(text.dropFirst(2), radix: 16) { return .integer(value) }
                if text.hasPrefix("0o"), let value = Int(text.dropFirst(2), radix: 8) { return .integer(value) }
                throw Failure(line: max(1, scalar.mark?.line ?? 1), message: "the integer \(text) is out of range")
            case .float:
                if let value = Double(text.hasPrefix("+") ? String(text.dropFirst()) : text) { return .number(value) }
                switch text.lowercased() {
                case ".inf", "+.inf": return .number(.infinity)
                case "-.inf": return .number(-.infinity)
                default: return .number(.nan)
                }
            default: return .string(text)
            }
        case let .sequence(sequence):
            var items: [YAMLNode] = []
            for item in sequence { items.append(try self.node(item)) }
            return .sequence(items)
        case let .mapping(mapping):
            var members: [YAMLNode.Member] = []
            for pair in mapping {
                guard case let .scalar(key) = pair.key else {
                    throw Failure(line: max(1, pair.key.mark?.line ?? 1), message: "a mapping key must be a scalar")
                }
                members.append(YAMLNode.Member(key: key.string, value: try self.node(pair.value)))
            }
            return .mapping(members)
        case let .alias(alias):
            throw Failure(line: max(1, alias.mark?.line ?? 1), message: "aliases are not accepted")
        }
    }

    private static func lineCount(_ bytes: [UInt8]) -> Int {
        bytes.reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
    }

    /// Yams' error as a failure at its line (kept inside the text: libyaml may point past its end).
    private static func failure(_ error: any Error, lines: Int) -> Failure {
        let line: Int
        let message: String
        switch error as? YamlError {
        case let .scanner(_, problem, mark, _)?, let .parser(_, problem, mark, _)?, let .composer(_, problem, mark, _)?:
            line = mark.line
            message = problem
        case let .duplicatedKeysInMapping(duplicates, context)?:
            line = context.mark.line
            message = "duplicate key \(duplicates.first ?? "")"
        default:
            line = 1
            message = String(describing: error).split(separator: "\n").first.map(String.init) ?? "not YAML"
        }
        return Failure(line: min(max(1, line), lines), message: message)
    }
}
