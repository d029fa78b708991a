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
        var parser = Parser(lines: bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init))
        return try parser.document()
    }
}

private let space = UInt8(ascii: " ")
private let hash = UInt8(ascii: "#")
private let colon = UInt8(ascii: ":")
private let dash = UInt8(ascii: "-")
private let doubleQuote = UInt8(ascii: "\"")
private let singleQuote = UInt8(ascii: "'")

/// Whether a `#` at `index` starts a comment (YAML: only after a space or at a row's start).
private func isComment(_ line: [UInt8], _ index: Int) -> Bool {
    line[index] == hash && (index == 0 || line[index - 1] == space)
}

private struct Parser {
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
        return lines[row].prefix { $0 == space }.count
    }

    /// Blank or comment-only (never a virtual row, which has content).
    func isBlank(_ row: Int) -> Bool {
        if let virtual, virtual.row == row { return false }
        let line = lines[row]
        guard let first = line.firstIndex(where: { $0 != space }) else { return true }
        return line[first] == hash
    }

    mutating func skipBlank() { while row < lines.count, isBlank(row) { row += 1 } }

    /// Whether the row's content at `column` is a sequence item (`-` then a space or the end).
    func isItem(_ row: Int, at column: Int) -> Bool {
        let line = lines[row]
        return column < line.count && line[column] == dash && (column + 1 == line.count || line[column + 1] == space)
    }

    mutating func nested<T>(_ body: (inout Parser) throws(Failure) -> T) throws(Failure) -> T {
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
        try nested { (p: inout Parser) throws(Failure) -> YAMLNode in
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
        try nested { (p: inout Parser) throws(Failure) -> YAMLNode in
            var items: [YAMLNode] = []
            while try p.nextRow(at: indent) {
                guard p.isItem(p.row, at: indent) else { break }
                let line = p.lines[p.row]
                var column = indent + 1
                while column < line.count, line[column] == space { column += 1 }
                var compact = false
                if column < line.count, line[column] != hash {
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

    /// The key of a `key: value` row starting at `column` and the column after its `:`; nil when
    /// the row is not a mapping entry.
    func entryKey(_ row: Int, at column: Int) throws(Failure) -> (String, Int)? {
        let line = lines[row]
        guard column < line.count else { return nil }
        var index = column
        let key: String
        switch line[column] {
        case doubleQuote, singleQuote:
            var end = column
            guard let text = try? quotedScalar(line, from: column, end: &end) else { return nil }
            index = end
            while index < line.count, line[index] == space { index += 1 }
            guard index < line.count, line[index] == colon else { return nil }
            key = text
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            return nil
        default:
            while index < line.count {
                if line[index] == hash, index > column, line[index - 1] == space { return nil }
                if line[index] == colon, index + 1 == line.count || line[index + 1] == space { break }
                index += 1
            }
            guard index < line.count else { return nil }
            var end = index
            while end > column, line[end - 1] == space { end -= 1 }
            let text = String(decoding: line[column..<end], as: UTF8.self)
            guard YAMLEmitter.isPlain(text, inFlow: false) else {
                throw fail("the key \(YAMLEmitter.quoted(text)) must be quoted (a YAML reader could take it for another type)", row: row)
            }
            key = text
        }
        index += 1
        guard index == line.count || line[index] == space else { return nil }
        return (key, index)
    }

    /// The value after `key:` (or `-`) on the current row, from `column`; a value on the next rows
    /// when the rest of the row is empty. Leaves `row` after the value.
    mutating func inlineValue(from column: Int, parentIndent: Int, afterKey: Bool) throws(Failure) -> YAMLNode {
        let line = lines[row]
        var index = column
        while index < line.count, line[index] == space { index += 1 }
        guard index < line.count, line[index] != hash else {
            row += 1
            skipBlank()
            guard row < lines.count else { return .null }
            let next = indent(row)
            if next > parentIndent { return try node(minIndent: parentIndent + 1) }
            // `key:` then `- item` at the key's own indentation.
            if afterKey, next == parentIndent, isItem(row, at: next) { return try sequence(at: next) }
            return .null
        }
        let value: YAMLNode
        switch line[index] {
        case UInt8(ascii: "|"):
            return try literalBlock(from: index, parentIndent: parentIndent)
        case UInt8(ascii: ">"):
            throw fail("folded scalars (`>`) are not read: use `|` or a quoted string")
        case UInt8(ascii: "&"), UInt8(ascii: "*"), UInt8(ascii: "!"):
            throw fail("anchors, aliases and tags are not read")
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            value = try nested { (p: inout Parser) throws(Failure) -> YAMLNode in try p.flow(line, &index) }
        case doubleQuote, singleQuote:
            var end = index
            value = .string(try quotedScalar(line, from: index, end: &end))
            index = end
        default:
            var end = index
            while end < line.count, !(line[end] == hash && line[end - 1] == space) { end += 1 }
            var trimmed = end
            while trimmed > index, line[trimmed - 1] == space { trimmed -= 1 }
            value = try resolve(String(decoding: line[index..<trimmed], as: UTF8.self), inFlow: false)
            index = end
        }
        try expectEnd(line, from: index)
        row += 1
        return value
    }

    /// Only spaces and a comment may follow a value on its row.
    func expectEnd(_ line: [UInt8], from index: Int) throws(Failure) {
        var index = index
        while index < line.count, line[index] == space { index += 1 }
        guard index < line.count else { return }
        if line[index] == hash, index > 0, line[index - 1] == space { return }
        throw fail("unexpected text after a value")
    }

    /// `|` or `|-` and the more-indented rows under it.
    mutating func literalBlock(from index: Int, parentIndent: Int) throws(Failure) -> YAMLNode {
        let header = lines[row]
        var after = index + 1
        var strip = false
        if after < header.count, header[after] == dash { strip = true; after += 1 }
        if after < header.count, header[after] != space {
            throw fail("only `|` and `|-` literal blocks are read (no `|+`, no indentation digit)")
        }
        try expectEnd(header, from: after)
        row += 1
        var blockIndent: Int?
        var leadingBlank = 0
        var texts: [String] = []
        while row < lines.count {
            let line = lines[row]
            let spaces = line.prefix { $0 == space }.count
            if spaces == line.count {
                if blockIndent == nil { leadingBlank = max(leadingBlank, spaces) }
                // A blank row: part of the block (its spaces past the indentation are content).
                if let blockIndent, spaces > blockIndent {
                    texts.append(String(decoding: line[blockIndent...], as: UTF8.self))
                } else {
                    texts.append("")
                }
                row += 1
                continue
            }
            if blockIndent == nil {
                guard spaces > parentIndent else { break }
                guard spaces >= leadingBlank else {
                    throw fail("a blank line before a literal block's first line has more spaces than that line")
                }
                blockIndent = spaces
            }
            guard let blockIndent, spaces >= blockIndent else { break }
            texts.append(String(decoding: line[blockIndent...], as: UTF8.self))
            row += 1
        }
        // Trailing blank rows belong to what follows (comments, the next key).
        while let last = texts.last, last.isEmpty { texts.removeLast(); row -= 1 }
        guard !texts.isEmpty else { return .string("") }
        // `|` keeps the last line's break: there is none when the text ends on that line.
        let broken = row < lines.count
        return .string(texts.joined(separator: "\n") + (strip || !broken ? "" : "\n"))
    }

    // MARK: Scalars

    /// A plain scalar's value: `true`/`false`, `null`/`~`, an integer, a float as both YAML 1.1
    /// and 1.2 read it (`2.5`, `1.0e+16`, `.inf`, `.nan`), or a string that reads as nothing else.
    func resolve(_ text: String, inFlow: Bool) throws(Failure) -> YAMLNode {
        switch text {
        case "true": return .boolean(true)
        case "false": return .boolean(false)
        case "null", "~": return .null
        case ".nan": return .number(.nan)
        case ".inf": return .number(.infinity)
        case "-.inf": return .number(-.infinity)
        default: break
        }
        let bytes = Array(text.utf8)
        var index = bytes.first == dash ? 1 : 0
        let digitsStart = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        let wholeDigits = index - digitsStart
        let canonicalWhole = wholeDigits == 1 || (wholeDigits > 1 && bytes[digitsStart] != UInt8(ascii: "0"))
        if canonicalWhole, index == bytes.count {
            guard let value = Int(text) else { throw fail("the integer \(text) is out of range (signed 64-bit)") }
            return .integer(value)
        }
        if canonicalWhole, index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fraction = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            var valid = index > fraction
            if valid, index < bytes.count {
                // An exponent needs its sign for YAML 1.1: `e+16`, `e-3`.
                let letter = bytes[index]
                valid = (letter == UInt8(ascii: "e") || letter == UInt8(ascii: "E")) && index + 2 < bytes.count
                    && (bytes[index + 1] == UInt8(ascii: "+") || bytes[index + 1] == dash)
                    && bytes[(index + 2)...].allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
            }
            if valid, let value = Double(text) { return .number(value) }
        }
        guard YAMLEmitter.isPlain(text, inFlow: inFlow) else {
            throw fail("\(YAMLEmitter.quoted(text)) must be quoted (a YAML reader could take it for another type, or it is not a plain scalar)")
        }
        return .string(text)
    }

    /// A single- or double-quoted scalar starting at `start` and ending on its row; `end` is set
    /// after its closing quote.
    func quotedScalar(_ line: [UInt8], from start: Int, end: inout Int) throws(Failure) -> String {
        let quote = line[start]
        var bytes: [UInt8] = []
        var index = start + 1
        while index < line.count {
            let byte = line[index]
            if quote == singleQuote, byte == singleQuote {
                if index + 1 < line.count, line[index + 1] == singleQuote { bytes.append(singleQuote); index += 2; continue }
                end = index + 1
                return String(decoding: bytes, as: UTF8.self)
            }
            if quote == doubleQuote, byte == doubleQuote {
                end = index + 1
                return String(decoding: bytes, as: UTF8.self)
            }
            if quote == doubleQuote, byte == UInt8(ascii: "\\") {
                index += 1
                guard index < line.count else { break }
                let scalar = try escape(line, &index)
                bytes.append(contentsOf: Array(String(Character(scalar)).utf8))
                continue
            }
            bytes.append(byte)
            index += 1
        }
        throw fail("a quoted string must end on its line")
    }

    /// The escape after a `\` at `index` (advanced past it): JSON's, and YAML's `\x`, `\U`, `\0`, ...
    func escape(_ line: [UInt8], _ index: inout Int) throws(Failure) -> Unicode.Scalar {
        let letter = line[index]
        index += 1
        func hex(_ count: Int) throws(Failure) -> Unicode.Scalar {
            guard index + count <= line.count,
                  let value = UInt32(String(decoding: line[index..<(index + count)], as: UTF8.self), radix: 16),
                  let scalar = Unicode.Scalar(value) else { throw fail("a bad \\x, \\u or \\U escape (or a surrogate)") }
            index += count
            return scalar
        }
        switch letter {
        case UInt8(ascii: "\""): return "\""
        case UInt8(ascii: "\\"): return "\\"
        case UInt8(ascii: "/"): return "/"
        case UInt8(ascii: " "): return " "
        case UInt8(ascii: "n"): return "\n"
        case UInt8(ascii: "t"): return "\t"
        case UInt8(ascii: "r"): return "\r"
        case UInt8(ascii: "b"): return "\u{08}"
        case UInt8(ascii: "f"): return "\u{0C}"
        case UInt8(ascii: "0"): return "\u{00}"
        case UInt8(ascii: "a"): return "\u{07}"
        case UInt8(ascii: "v"): return "\u{0B}"
        case UInt8(ascii: "e"): return "\u{1B}"
        case UInt8(ascii: "N"): return "\u{85}"
        case UInt8(ascii: "_"): return "\u{A0}"
        case UInt8(ascii: "L"): return "\u{2028}"
        case UInt8(ascii: "P"): return "\u{2029}"
        case UInt8(ascii: "x"): return try hex(2)
        case UInt8(ascii: "u"): return try hex(4)
        case UInt8(ascii: "U"): return try hex(8)
        default: throw fail("an unknown escape \\\(String(decoding: [letter], as: UTF8.self))")
        }
    }

    // MARK: Flow collections

    /// `[a, b]` or `{ k: v }` (nested ones too) starting at `index`, which is left after it.
    mutating func flow(_ line: [UInt8], _ index: inout Int) throws(Failure) -> YAMLNode {
        let isMapping = line[index] == UInt8(ascii: "{")
        let close = isMapping ? UInt8(ascii: "}") : UInt8(ascii: "]")
        index += 1
        var items: [YAMLNode] = []
        var members: [YAMLNode.Member] = []
        var seen: Set<String> = []
        func skipSpaces(_ index: inout Int) { while index < line.count, line[index] == space { index += 1 } }
        skipSpaces(&index)
        if index < line.count, line[index] == close { index += 1; return isMapping ? .mapping([]) : .sequence([]) }
        while true {
            skipSpaces(&index)
            if isMapping {
                let key: String
                if index < line.count, line[index] == doubleQuote || line[index] == singleQuote {
                    var end = index
                    key = try quotedScalar(line, from: index, end: &end)
                    index = end
                    skipSpaces(&index)
                } else {
                    let start = index
                    while index < line.count, !",[]{}:".utf8.contains(line[index]), !isComment(line, index) { index += 1 }
                    var end = index
                    while end > start, line[end - 1] == space { end -= 1 }
                    key = String(decoding: line[start..<end], as: UTF8.self)
                    guard YAMLEmitter.isPlain(key, inFlow: true) else {
                        throw fail("the flow key \(YAMLEmitter.quoted(key)) must be quoted")
                    }
                }
                guard index + 1 < line.count, line[index] == colon, line[index + 1] == space else {
                    throw fail("expected `: ` after a key in a flow mapping")
                }
                index += 2
                guard seen.insert(key).inserted else { throw fail("duplicate key \(YAMLEmitter.quoted(key))") }
                members.append(YAMLNode.Member(key: key, value: try flowItem(line, &index)))
            } else {
                items.append(try flowItem(line, &index))
            }
            skipSpaces(&index)
            guard index < line.count else { throw fail("a flow collection must end on its line") }
            if line[index] == close { index += 1; break }
            guard line[index] == UInt8(ascii: ",") else { throw fail("expected `,` or `\(String(decoding: [close], as: UTF8.self))`") }
            index += 1
        }
        return isMapping ? .mapping(members) : .sequence(items)
    }

    mutating func flowItem(_ line: [UInt8], _ index: inout Int) throws(Failure) -> YAMLNode {
        while index < line.count, line[index] == space { index += 1 }
        guard index < line.count else { throw fail("a flow collection must end on its line") }
        switch line[index] {
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            return try nested { (p: inout Parser) throws(Failure) -> YAMLNode in try p.flow(line, &index) }
        case doubleQuote, singleQuote:
            var end = index
            let text = try quotedScalar(line, from: index, end: &end)
            index = end
            return .string(text)
        default:
            let start = index
            while index < line.count, !",[]{}".utf8.contains(line[index]), !isComment(line, index) {
                if line[index] == colon { throw fail("a `:` in a flow value: quote it") }
                index += 1
            }
            var end = index
            while end > start, line[end - 1] == space { end -= 1 }
            guard end > start else { throw fail("an empty value in a flow collection") }
            return try resolve(String(decoding: line[start..<end], as: UTF8.self), inFlow: true)
        }
    }
}
