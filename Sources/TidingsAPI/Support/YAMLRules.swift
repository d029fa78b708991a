import CYaml
import Yams

/// What every YAML text the server reads is held to — request bodies (``YAMLDocumentReader``)
/// and the contract (``YAMLParser``) — before and while Yams reads it.
enum YAMLRules {
    struct Refusal: Error, Equatable {
        let detail: String
    }

    /// Deepest nesting accepted (sequences and mappings, counted by ``checkShape(_:)``).
    /// Below libyaml's own limit (1,000), so the refusal is ours and says what it is.
    static let maxNesting = 512

    // MARK: Bounds, before Yams composes a node

    /// Refuses anchors and aliases (`&name`, `*name`) and nesting deeper than ``maxNesting``,
    /// exactly: libyaml's own event parser (iterative, no recursion) walks the text once, and the
    /// first anchor, alias or level too deep refuses it. Yams' composer is recursive and expands
    /// an alias into the anchored node, so an alias bomb or a deep text must never reach it.
    /// A syntax error ends the walk quietly: Yams then stops at the same place and names it.
    static func checkShape(_ bytes: [UInt8]) throws(Refusal) {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else {
            throw Refusal(detail: "The YAML reader could not start (out of memory).")
        }
        defer { yaml_parser_delete(&parser) }
        var refusal: Refusal?
        bytes.withUnsafeBufferPointer { buffer in
            yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            var depth = 0
            var event = yaml_event_t()
            while yaml_parser_parse(&parser, &event) == 1 {
                defer { yaml_event_delete(&event) }
                let type = event.type
                if type == YAML_STREAM_END_EVENT { return }
                let anchored: Bool
                switch type {
                case YAML_ALIAS_EVENT: anchored = true
                case YAML_SCALAR_EVENT: anchored = event.data.scalar.anchor != nil
                case YAML_SEQUENCE_START_EVENT: anchored = event.data.sequence_start.anchor != nil; depth += 1
                case YAML_MAPPING_START_EVENT: anchored = event.data.mapping_start.anchor != nil; depth += 1
                case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT: anchored = false; depth -= 1
                default: anchored = false
                }
                if anchored {
                    refusal = Refusal(detail: "YAML anchors and aliases (&name, *name) are not accepted; write each value out.")
                    return
                }
                if depth > maxNesting {
                    refusal = Refusal(detail: "The YAML document nests deeper than \(maxNesting) levels.")
                    return
                }
            }
        }
        if let refusal { throw refusal }
    }

    // MARK: Scalars: YAML 1.2's core schema

    /// `true`/`false`, decimal, `0o` and `0x` integers, decimal floats (`.inf`, `.nan` read as
    /// floats and are then refused: JSON has no such number), `null`/`~`/nothing.
    static let coreSchema: Resolver = {
        do {
            return try Resolver.basic
                .appending(.bool, "^(?:true|True|TRUE|false|False|FALSE)$")
                .appending(.int, "^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
                .appending(.float, #"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"#)
                .appending(.null, "^(?:~|null|Null|NULL|)$")
        } catch {
            preconditionFailure("the core schema's patterns compile: \(error)")
        }
    }()

    // MARK: Writing strings

    /// Whether a string may be written plain (unquoted) and still read back as this string by
    /// YAML 1.2's core schema and by YAML 1.1 readers (PyYAML): not a word they type (`yes`,
    /// `null`, `~`), nothing that starts like a number (digits, sign, dot: dates, octals,
    /// sexagesimals too; quoting a harmless `3.1.0` is the price of never guessing wrong), no
    /// character that must be escaped. libyaml quotes whatever its syntax needs besides (`: `,
    /// ` #`, a leading indicator). Cheap: no regular expression per string.
    static func isPlainSafe(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first else { return false }
        if "0123456789+-.".unicodeScalars.contains(first) { return false }
        if text.unicodeScalars.contains(where: needsEscape) { return false }
        if text.utf8.count > 5 { return true }
        return !typedWords.contains(text.lowercased())
    }

    private static let typedWords: Set<String> = ["true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", "<<", "="]

    /// Characters that are written escaped (in a double-quoted scalar): C0 and C1 controls,
    /// DEL, the byte-order mark, and the Unicode line and paragraph separators.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || value == 0x7F || (value >= 0x80 && value < 0xA0)
            || value == 0xFEFF || value == 0x2028 || value == 0x2029
    }

    // MARK: Tags, made once

    /// The tags of what the server writes. `Tag(_:)` builds Yams' default constructor (several
    /// dictionaries) on every call; a contract of 1,000 keys made it half of start-up. Tags are
    /// never changed after this, so sharing them across threads is safe.
    nonisolated(unsafe) static let str = Tag(.str)
    nonisolated(unsafe) static let int = Tag(.int)
    nonisolated(unsafe) static let float = Tag(.float)
    nonisolated(unsafe) static let bool = Tag(.bool)
    nonisolated(unsafe) static let null = Tag(.null)
    nonisolated(unsafe) static let seq = Tag(.seq)
    nonisolated(unsafe) static let map = Tag(.map)
}
