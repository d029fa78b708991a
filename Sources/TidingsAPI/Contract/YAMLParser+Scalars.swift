// The scalars and flow collections within one row, for YAMLParser.Reader (YAMLParser.swift).

extension YAMLParser.Reader {
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
        var index = bytes.first == YAMLByte.dash ? 1 : 0
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
                    && (bytes[index + 1] == UInt8(ascii: "+") || bytes[index + 1] == YAMLByte.dash)
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
            if quote == YAMLByte.singleQuote, byte == YAMLByte.singleQuote {
                if index + 1 < line.count, line[index + 1] == YAMLByte.singleQuote { bytes.append(YAMLByte.singleQuote); index += 2; continue }
                end = index + 1
                return String(decoding: bytes, as: UTF8.self)
            }
            if quote == YAMLByte.doubleQuote, byte == YAMLByte.doubleQuote {
                end = index + 1
                return String(decoding: bytes, as: UTF8.self)
            }
            if quote == YAMLByte.doubleQuote, byte == UInt8(ascii: "\\") {
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
        func skipSpaces(_ index: inout Int) { while index < line.count, line[index] == YAMLByte.space { index += 1 } }
        skipSpaces(&index)
        if index < line.count, line[index] == close { index += 1; return isMapping ? .mapping([]) : .sequence([]) }
        while true {
            skipSpaces(&index)
            if isMapping {
                let key: String
                if index < line.count, line[index] == YAMLByte.doubleQuote || line[index] == YAMLByte.singleQuote {
                    var end = index
                    key = try quotedScalar(line, from: index, end: &end)
                    index = end
                    skipSpaces(&index)
                } else {
                    let start = index
                    while index < line.count, !",[]{}:".utf8.contains(line[index]), !YAMLByte.isComment(line, index) { index += 1 }
                    var end = index
                    while end > start, line[end - 1] == YAMLByte.space { end -= 1 }
                    key = String(decoding: line[start..<end], as: UTF8.self)
                    guard YAMLEmitter.isPlain(key, inFlow: true) else {
                        throw fail("the flow key \(YAMLEmitter.quoted(key)) must be quoted")
                    }
                }
                guard index + 1 < line.count, line[index] == YAMLByte.colon, line[index + 1] == YAMLByte.space else {
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
        while index < line.count, line[index] == YAMLByte.space { index += 1 }
        guard index < line.count else { throw fail("a flow collection must end on its line") }
        switch line[index] {
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            return try nested { (p: inout Self) throws(Failure) -> YAMLNode in try p.flow(line, &index) }
        case YAMLByte.doubleQuote, YAMLByte.singleQuote:
            var end = index
            let text = try quotedScalar(line, from: index, end: &end)
            index = end
            return .string(text)
        default:
            let start = index
            while index < line.count, !",[]{}".utf8.contains(line[index]), !YAMLByte.isComment(line, index) {
                if line[index] == YAMLByte.colon { throw fail("a `:` in a flow value: quote it") }
                index += 1
            }
            var end = index
            while end > start, line[end - 1] == YAMLByte.space { end -= 1 }
            guard end > start else { throw fail("an empty value in a flow collection") }
            return try resolve(String(decoding: line[start..<end], as: UTF8.self), inFlow: true)
        }
    }
}
