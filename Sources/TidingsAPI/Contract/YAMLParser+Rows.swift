// What one row holds, for YAMLParser.Reader (YAMLParser.swift): a mapping entry's key, the value
// after a key or `- `, the row's end, and `|` literal blocks. (Scalars and flow collections:
// YAMLParser+Scalars.swift.)

extension YAMLParser.Reader {
    /// The key of a `key: value` row starting at `column` and the column after its `:`; nil when
    /// the row is not a mapping entry.
    func entryKey(_ row: Int, at column: Int) throws(Failure) -> (String, Int)? {
        let line = lines[row]
        guard column < line.count else { return nil }
        var index = column
        let key: String
        switch line[column] {
        case YAMLByte.doubleQuote, YAMLByte.singleQuote:
            var end = column
            guard let text = try? quotedScalar(line, from: column, end: &end) else { return nil }
            index = end
            while index < line.count, line[index] == YAMLByte.space { index += 1 }
            guard index < line.count, line[index] == YAMLByte.colon else { return nil }
            key = text
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            return nil
        default:
            while index < line.count {
                if line[index] == YAMLByte.hash, index > column, line[index - 1] == YAMLByte.space { return nil }
                if line[index] == YAMLByte.colon, index + 1 == line.count || line[index + 1] == YAMLByte.space { break }
                index += 1
            }
            guard index < line.count else { return nil }
            var end = index
            while end > column, line[end - 1] == YAMLByte.space { end -= 1 }
            let text = String(decoding: line[column..<end], as: UTF8.self)
            guard YAMLEmitter.isPlain(text, inFlow: false) else {
                throw fail("the key \(YAMLEmitter.quoted(text)) must be quoted (a YAML reader could take it for another type)", row: row)
            }
            key = text
        }
        index += 1
        guard index == line.count || line[index] == YAMLByte.space else { return nil }
        return (key, index)
    }

    /// The value after `key:` (or `-`) on the current row, from `column`; a value on the next rows
    /// when the rest of the row is empty. Leaves `row` after the value.
    mutating func inlineValue(from column: Int, parentIndent: Int, afterKey: Bool) throws(Failure) -> YAMLNode {
        let line = lines[row]
        var index = column
        while index < line.count, line[index] == YAMLByte.space { index += 1 }
        guard index < line.count, line[index] != YAMLByte.hash else {
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
            value = try nested { (p: inout Self) throws(Failure) -> YAMLNode in try p.flow(line, &index) }
        case YAMLByte.doubleQuote, YAMLByte.singleQuote:
            var end = index
            value = .string(try quotedScalar(line, from: index, end: &end))
            index = end
        default:
            var end = index
            while end < line.count, !(line[end] == YAMLByte.hash && line[end - 1] == YAMLByte.space) { end += 1 }
            var trimmed = end
            while trimmed > index, line[trimmed - 1] == YAMLByte.space { trimmed -= 1 }
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
        while index < line.count, line[index] == YAMLByte.space { index += 1 }
        guard index < line.count else { return }
        if line[index] == YAMLByte.hash, index > 0, line[index - 1] == YAMLByte.space { return }
        throw fail("unexpected text after a value")
    }

    /// `|` or `|-` and the more-indented rows under it.
    mutating func literalBlock(from index: Int, parentIndent: Int) throws(Failure) -> YAMLNode {
        let header = lines[row]
        var after = index + 1
        var strip = false
        if after < header.count, header[after] == YAMLByte.dash { strip = true; after += 1 }
        if after < header.count, header[after] != YAMLByte.space {
            throw fail("only `|` and `|-` literal blocks are read (no `|+`, no indentation digit)")
        }
        try expectEnd(header, from: after)
        row += 1
        var blockIndent: Int?
        var leadingBlank = 0
        var texts: [String] = []
        while row < lines.count {
            let line = lines[row]
            let spaces = line.prefix { $0 == YAMLByte.space }.count
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
}
