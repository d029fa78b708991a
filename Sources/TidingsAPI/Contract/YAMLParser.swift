/// Reads the YAML that ``YAMLEmitter`` writes — the subset `openapi.base.yaml` is written in — into
/// a ``YAMLNode``: block mappings and sequences (also `- key: value` and a sequence at its key's
/// indentation), one-line flow collections, plain, single- and double-quoted scalars on one line,
/// `|` / `|-` literal blocks, comments. Anything else is refused with its line rather than guessed
/// at: anchors, tags, folded or multi-line scalars, document markers, duplicate keys, raw tabs and
/// control characters, and plain scalars that a YAML 1.1 and a 1.2 reader would type differently
/// (`yes`, `1e5`, `0x1F`, `200` as a key: quote them). So what this reads is what PyYAML reads.
enum YAMLParser {
    /// Why a text was refused, and where (1-based line).
    struct Failure: Error, Equatable, CustomStringConvertible {
        let line: Int
        let message: String
        var description: String { "line \(line): \(message)" }
    }

    /// Deepest nesting of collections accepted (the parser recurses once per level).
    static let maxDepth = 64

    static func parse(_ text: String) throws(Failure) -> YAMLNode {
        try parse(Array(text.utf8))
    }

    static func parse(_ bytes: [UInt8]) throws(Failure) -> YAMLNode {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw Failure(line: 1, message: "not UTF-8")
        }
        var line = 1
        for scalar in text.unicodeScalars {
            if scalar == "\n" { line += 1; continue }
            if YAMLEmitter.needsEscape(scalar) {
                throw Failure(line: line, message: "a raw tab or control character (U+\(String(scalar.value, radix: 16, uppercase: true))); "
                    + "write it as an escape in a double-quoted string")
            }
        }
        var parser = Reader(lines: bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init))
        return try parser.document()
    }
}

/// The bytes the reader looks for.
enum YAMLByte {
    static let space = UInt8(ascii: " ")
    static let hash = UInt8(ascii: "#")
    static let colon = UInt8(ascii: ":")
    static let dash = UInt8(ascii: "-")
    static let doubleQuote = UInt8(ascii: "\"")
    static let singleQuote = UInt8(ascii: "'")

    /// Whether a `#` at `index` starts a comment (YAML: only after a space or at a row's start).
    static func isComment(_ line: [UInt8], _ index: Int) -> Bool {
        line[index] == hash && (index == 0 || line[index - 1] == space)
    }
}

extension YAMLParser {
    /// The reader's state over the text's rows, and the block structure (mappings, sequences).
    /// What one row holds: YAMLParser+Rows.swift; its scalars and flow collections:
    /// YAMLParser+Scalars.swift.
    struct Reader {
        typealias Failure = YAMLParser.Failure

        let lines: [[UInt8]]
        var row = 0
        /// A row whose content starts after a `- ` (its items or keys align there, not at its indentation).
        var virtual: (row: Int, column: Int)?
        var depth = 0

        init(lines: [[UInt8]]) { self.lines = lines }

        func fail(_ message: String, row: Int? = nil) -> Failure { Failure(line: (row ?? self.row) + 1, message: message) }

        // MARK: Rows

        func indent(_ row: Int) -> Int {
            if let virtual, virtual.row == row { return virtual.column }
            return lines[row].prefix { $0 == YAMLByte.space }.count
        }

        /// Blank or comment-only (never a virtual row, which has content).
        func isBlank(_ row: Int) -> Bool {
            if let virtual, virtual.row == row { return false }
            let line = lines[row]
            guard let first = line.firstIndex(where: { $0 != YAMLByte.space }) else { return true }
            return line[first] == YAMLByte.hash
        }

        mutating func skipBlank() { while row < lines.count, isBlank(row) { row += 1 } }

        /// Whether the row's content at `column` is a sequence item (`-` then a space or the end).
        func isItem(_ row: Int, at column: Int) -> Bool {
            let line = lines[row]
            return column < line.count && line[column] == YAMLByte.dash && (column + 1 == line.count || line[column + 1] == YAMLByte.space)
        }

        mutating func nested<T>(_ body: (inout Self) throws(Failure) -> T) throws(Failure) -> T {
            depth += 1
            defer { depth -= 1 }
            guard depth <= YAMLParser.maxDepth else { throw fail("nested more than \(YAMLParser.maxDepth) levels deep") }
            return try body(&self)
        }

        // MARK: Block structure

        mutating func document() throws(Failure) -> YAMLNode {
            for (index, line) in lines.enumerated() where line.starts(with: Array("---".utf8)) || line.starts(with: Array("...".utf8)) {
                throw fail("document markers (`---`, `...`) are not read: one document per file", row: index)
            }
            skipBlank()
            guard row < lines.count else { throw fail("no content", row: 0) }
            let root = try node(minIndent: 0)
            skipBlank()
            if row < lines.count { throw fail("unexpected content after the document's root") }
            return root
        }

        /// The block node starting at the next non-blank row (indented at least `minIndent`).
        mutating func node(minIndent: Int) throws(Failure) -> YAMLNode {
            skipBlank()
            guard row < lines.count, indent(row) >= minIndent else { return .null }
            let column = indent(row)
            if isItem(row, at: column) { return try sequence(at: column) }
            if try entryKey(row, at: column) != nil { return try mapping(at: column) }
            return try inlineValue(from: column, parentIndent: max(0, minIndent - 1), afterKey: false)
        }

        /// Moves to the next non-blank row: true when it continues the collection at `indent`, false
        /// at the end or a shallower row; a deeper one is an error.
        mutating func nextRow(at indent: Int) throws(Failure) -> Bool {
            skipBlank()
            guard row < lines.count, self.indent(row) >= indent else { return false }
            if self.indent(row) > indent { throw fail("unexpected indentation") }
            return true
        }

        mutating func mapping(at indent: Int) throws(Failure) -> YAMLNode {
            try nested { (p: inout Self) throws(Failure) -> YAMLNode in
                var members: [YAMLNode.Member] = []
                var seen: Set<String> = []
                while try p.nextRow(at: indent) {
                    if p.isItem(p.row, at: indent) { throw p.fail("a sequence item where a key was expected") }
                    guard let (key, after) = try p.entryKey(p.row, at: indent) else {
                        throw p.fail("expected `key: value`")
                    }
                    guard seen.insert(key).inserted else { throw p.fail("duplicate key \(YAMLEmitter.quoted(key))") }
                    let value = try p.inlineValue(from: after, parentIndent: indent, afterKey: true)
                    members.append(YAMLNode.Member(key: key, value: value))
                }
                return .mapping(members)
            }
        }

        mutating func sequence(at indent: Int) throws(Failure) -> YAMLNode {
            try nested { (p: inout Self) throws(Failure) -> YAMLNode in
                var items: [YAMLNode] = []
                while try p.nextRow(at: indent) {
                    guard p.isItem(p.row, at: indent) else { break }
                    let line = p.lines[p.row]
                    var column = indent + 1
                    while column < line.count, line[column] == YAMLByte.space { column += 1 }
                    var compact = false
                    if column < line.count, line[column] != YAMLByte.hash {
                        compact = p.isItem(p.row, at: column)
                        if !compact, try p.entryKey(p.row, at: column) != nil { compact = true }
                    }
                    if compact {
                        // `- - a` or `- key: value`: the nested collection aligns at `column`.
                        p.virtual = (p.row, column)
                        items.append(try p.isItem(p.row, at: column) ? p.sequence(at: column) : p.mapping(at: column))
                    } else {
                        items.append(try p.inlineValue(from: indent + 1, parentIndent: indent, afterKey: false))
                    }
                }
                return .sequence(items)
            }
        }
    }
}
