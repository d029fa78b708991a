import Yams

/// What every YAML text the server reads is held to — request bodies (``YAMLDocumentReader``)
/// and the contract (``YAMLParser``) — before and while Yams reads it.
enum YAMLRules {
    struct Refusal: Error, Equatable {
        let detail: String
    }

    /// Deepest nesting accepted (an upper bound computed from the text, see ``checkShape(_:)``).
    static let maxNesting = 2_000

    // MARK: Bounds, before Yams reads a byte

    /// Refuses anchors (`&name`; a text such as `R & D` or `R&D` is not one) and nesting
    /// deeper than ``maxNesting``. The bound is safe, not exact:
    /// flow nesting is at most the number of `[` and `{` in the text, and block nesting at most
    /// the column where a line's content starts (after its indentation and any `- `, `? `, `: `
    /// indicators), since every nested block node starts further right than its parent.
    static func checkShape(_ bytes: [UInt8]) throws(Refusal) {
        var flowOpeners = 0
        var deepestColumn = 0
        var atLineStart = true
        var column = 0
        var previous: UInt8 = UInt8(ascii: "\n")
        var sawAmpersand = false
        for byte in bytes {
            if sawAmpersand {
                sawAmpersand = false
                if !isSeparator(byte) {
                    throw Refusal(detail: "YAML anchors and aliases (&name, *name) are not accepted; write each value out.")
                }
            }
            switch byte {
            case UInt8(ascii: "\n"):
                atLineStart = true
                column = 0
                previous = byte
                continue
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                flowOpeners += 1
            case UInt8(ascii: "&"):
                // An anchor starts a token: after a separator, before a name. Without anchors
                // an alias (`*name`) has nothing to name, and Yams refuses it.
                if isSeparator(previous) {
                    sawAmpersand = true
                }
            default: break
            }
            if atLineStart {
                if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "?")
                    || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "\t") {
                    column += 1
                } else {
                    atLineStart = false
                    deepestColumn = max(deepestColumn, column)
                }
            }
            previous = byte
        }
        if atLineStart { deepestColumn = max(deepestColumn, column) }
        if flowOpeners + deepestColumn > maxNesting {
            throw Refusal(detail: "The YAML document nests too deeply (or opens more than \(maxNesting) [ and { in all).")
        }
    }

    private static func isSeparator(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
            || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: ",")
            || byte == UInt8(ascii: ":")
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
