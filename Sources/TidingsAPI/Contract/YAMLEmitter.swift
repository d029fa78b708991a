/// Writes a ``YAMLNode`` as YAML 1.2 text (also read correctly by YAML 1.1 parsers such as
/// PyYAML): block style, two-space indentation; small collections of scalars on one line in flow
/// style (`[a, b]`, `{ $ref: "#/..." }`); multi-line strings as literal blocks; a string written
/// plain only when no parser could read it as anything else, double-quoted (JSON escapes, which
/// YAML shares) otherwise.
enum YAMLEmitter {
    /// Widest line a flow collection may make before it is written in block style instead.
    static let flowWidth = 100

    /// The whole document, ending with a newline.
    static func document(_ root: YAMLNode) -> String {
        var out = ""
        switch root {
        case let .mapping(members) where !members.isEmpty: block(root, indent: 0, into: &out)
        case let .sequence(items) where !items.isEmpty: block(root, indent: 0, into: &out)
        // A scalar, or `{}` / `[]` (an empty text would read as null).
        default: out = scalar(root, inFlow: false) + "\n"
        }
        return out
    }

    private static func pad(_ indent: Int) -> String { String(repeating: " ", count: indent) }

    /// Writes a mapping's or sequence's entries, each on its own line(s) at `indent`.
    private static func block(_ node: YAMLNode, indent: Int, into out: inout String) {
        switch node {
        case let .mapping(members):
            for member in members {
                out += pad(indent) + key(member.key) + ":"
                value(member.value, indent: indent, lineStart: indent + key(member.key).count + 1, into: &out)
            }
        case let .sequence(items):
            for item in items {
                out += pad(indent) + "-"
                if case let .mapping(members) = item, !members.isEmpty, flow(item, inFlow: false) == nil {
                    // `- key: value` with the rest of the mapping aligned under its first key.
                    var nested = ""
                    block(item, indent: indent + 2, into: &nested)
                    out += " " + nested.dropFirst(indent + 2)
                } else {
                    value(item, indent: indent, lineStart: indent + 1, into: &out)
                }
            }
        default:
            out += pad(indent) + scalar(node, inFlow: false) + "\n"
        }
    }

    /// Writes what follows `key:` or `-` (already on the line, which is `lineStart` wide).
    private static func value(_ node: YAMLNode, indent: Int, lineStart: Int, into out: inout String) {
        switch node {
        case .mapping, .sequence:
            if let text = flow(node, inFlow: false), lineStart + 1 + text.count <= flowWidth {
                out += " " + text + "\n"
            } else {
                out += "\n"
                block(node, indent: indent + 2, into: &out)
            }
        case let .string(text) where text.contains("\n"):
            if let literal = literalBlock(text, indent: indent + 2) {
                out += " " + literal
            } else {
                out += " " + quoted(text) + "\n"
            }
        default:
            out += " " + scalar(node, inFlow: false) + "\n"
        }
    }

    /// One-line flow text of a collection whose members are all scalars (or empty); nil otherwise.
    private static func flow(_ node: YAMLNode, inFlow: Bool) -> String? {
        switch node {
        case let .mapping(members):
            if members.isEmpty { return "{}" }
            var parts: [String] = []
            for member in members {
                guard let text = flowScalar(member.value) else { return nil }
                parts.append(flowKey(member.key) + ": " + text)
            }
            return "{ " + parts.joined(separator: ", ") + " }"
        case let .sequence(items):
            if items.isEmpty { return "[]" }
            var parts: [String] = []
            for item in items {
                guard let text = flowScalar(item) else { return nil }
                parts.append(text)
            }
            return "[" + parts.joined(separator: ", ") + "]"
        default:
            return nil
        }
    }

    private static func flowScalar(_ node: YAMLNode) -> String? {
        switch node {
        case .mapping, .sequence: return nil
        case let .string(text) where text.contains("\n"): return nil
        default: return scalar(node, inFlow: true)
        }
    }

    private static func key(_ text: String) -> String { isPlain(text, inFlow: false) ? text : quoted(text) }
    private static func flowKey(_ text: String) -> String { isPlain(text, inFlow: true) ? text : quoted(text) }

    private static func scalar(_ node: YAMLNode, inFlow: Bool) -> String {
        switch node {
        case let .string(text): return isPlain(text, inFlow: inFlow) ? text : quoted(text)
        case let .integer(value): return String(value)
        case let .number(value): return number(value)
        case let .boolean(value): return value ? "true" : "false"
        case .null: return "null"
        case .mapping, .sequence: return flow(node, inFlow: inFlow) ?? "null"
        }
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

    /// `|-` or `|` block for a multi-line string, or nil when a literal block cannot carry it
    /// exactly (leading spaces on the first line, several trailing newlines, control characters).
    private static func literalBlock(_ text: String, indent: Int) -> String? {
        var body = Substring(text)
        var indicator = "|-"
        if body.hasSuffix("\n") {
            body = body.dropLast()
            indicator = "|"
            if body.hasSuffix("\n") { return nil }
        }
        let lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        guard let first = lines.first, !first.hasPrefix(" "), !first.isEmpty else { return nil }
        guard !text.unicodeScalars.contains(where: { $0 != "\n" && Self.needsEscape($0) }) else { return nil }
        var out = indicator + "\n"
        for line in lines {
            out += line.isEmpty ? "\n" : pad(indent) + line + "\n"
        }
        return out
    }

    /// Whether `text` can be written without quotes and still read back as this very string.
    static func isPlain(_ text: String, inFlow: Bool) -> Bool {
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last else { return false }
        if first == " " || last == " " || last == ":" { return false }
        if "-?:,[]{}#&*!|>'\"%@`".unicodeScalars.contains(first) { return false }
        for scalar in text.unicodeScalars {
            // Printable ASCII and ordinary non-ASCII only; anything else is quoted.
            if Self.needsEscape(scalar) { return false }
            // In flow context `:` too: older parsers end a flow key at any colon.
            if inFlow, ",[]{}:".unicodeScalars.contains(scalar) { return false }
        }
        if text.contains(": ") || text.contains(" #") || text.contains("\\") { return false }
        return !looksLikeOtherType(text)
    }

    /// Words and numbers a YAML 1.1 or 1.2 parser reads as something other than a string.
    private static func looksLikeOtherType(_ text: String) -> Bool {
        let lower = text.lowercased()
        let words: Set<String> = ["true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", "<<", "="]
        if words.contains(lower) { return true }
        // Anything that starts like a number (digits, sign, dot): dates, times, sexagesimals,
        // octals, floats. Quoting a few harmless ones ("3.1.0") is the price of never guessing wrong.
        guard let first = text.unicodeScalars.first else { return true }
        if "0123456789+.".unicodeScalars.contains(first) { return true }
        return false
    }

    /// Characters YAML does not allow raw, or reads as something else: C0 and C1 controls (NEL
    /// U+0085 is a line break to YAML 1.1), DEL, the byte-order mark, and the Unicode line and
    /// paragraph separators (line breaks to YAML 1.1, which would fold inside a quoted scalar).
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || value == 0x7F || (value >= 0x80 && value < 0xA0)
            || value == 0xFEFF || value == 0x2028 || value == 0x2029
    }

    /// A double-quoted scalar with JSON's escapes (a subset of YAML's).
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if Self.needsEscape(scalar) {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
