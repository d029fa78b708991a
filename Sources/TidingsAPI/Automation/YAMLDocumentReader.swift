import Foundation
import HTTPTypes
import Yams

/// Reads a YAML request body (`POST /apply`, `POST /schedules` with
/// `Content-Type: application/yaml`) into the JSON text the JSON path decodes, so both
/// formats are checked by the same rules. YAML is read by Yams (libyaml); what is ours is the
/// bound on what a body may make it do, and the scalar types (YAML 1.2's core schema, so
/// `no` and `on` stay strings and `0x1F` is not a surprise).
///
/// Outside input: every refusal is a ``Refusal`` with a message for a 400, never a trap.
/// - Anchors and aliases are refused: a document of settings needs none, and they are how a
///   small text becomes a huge tree (and Yams hashes whole nodes to find duplicate keys).
/// - Nesting is bounded before Yams sees the text (its composer recurses per level), and the
///   composition runs on a thread with a stack sized for that bound.
enum YAMLDocumentReader {
    typealias Refusal = YAMLRules.Refusal

    /// Stack of the thread that composes: ample for ``YAMLRules/maxNesting`` levels of Yams' recursion.
    static let stackBytes = 64 << 20

    /// The JSON text of the one document in `bytes` (UTF-8).
    static func json(fromYAML bytes: [UInt8]) throws(Refusal) -> [UInt8] {
        guard let text = String(validating: bytes, as: UTF8.self), !bytes.contains(0) else {
            throw Refusal(detail: "The request body is not UTF-8 YAML.")
        }
        try YAMLRules.checkShape(bytes)
        let root: Node?
        do {
            root = try Parser(yaml: text, resolver: YAMLRules.coreSchema, constructor: .default, encoding: .utf8).singleRoot()
        } catch {
            throw Refusal(detail: "The request body is not valid YAML: \(describe(error))")
        }
        guard let root else { throw Refusal(detail: "The request body holds no YAML document.") }
        var writer = JSONWriter()
        try writer.write(root, depth: 0)
        return writer.out
    }

    private struct JSONWriter {
        var out: [UInt8] = []

        mutating func write(_ node: Node, depth: Int) throws(Refusal) {
            guard depth <= YAMLRules.maxNesting else {
                throw Refusal(detail: "The YAML document nests too deeply.")
            }
            switch node {
            case let .scalar(scalar):
                try writeScalar(scalar, tag: Tag.Name(rawValue: node.tag.rawValue))
            case let .sequence(sequence):
                out.append(UInt8(ascii: "["))
                for (index, item) in sequence.enumerated() {
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    try write(item, depth: depth + 1)
                }
                out.append(UInt8(ascii: "]"))
            case let .mapping(mapping):
                out.append(UInt8(ascii: "{"))
                for (index, pair) in mapping.enumerated() {
                    guard case let .scalar(key) = pair.key else {
                        throw Refusal(detail: "A YAML mapping key must be plain text, not a list or a mapping.")
                    }
                    if index > 0 { out.append(UInt8(ascii: ",")) }
                    append(string: key.string)
                    out.append(UInt8(ascii: ":"))
                    try write(pair.value, depth: depth + 1)
                }
                out.append(UInt8(ascii: "}"))
            case .alias:
                throw Refusal(detail: "YAML aliases are not accepted.")
            }
        }

        private mutating func writeScalar(_ scalar: Node.Scalar, tag: Tag.Name) throws(Refusal) {
            let text = scalar.string
            switch tag {
            case .null:
                out.append(contentsOf: Array("null".utf8))
            case .bool:
                out.append(contentsOf: Array((text.lowercased() == "true" ? "true" : "false").utf8))
            case .int:
                guard let value = Self.integer(text) else {
                    throw Refusal(detail: "The YAML integer \(Self.shown(text)) is out of range.")
                }
                out.append(contentsOf: Array(String(value).utf8))
            case .float:
                guard let value = Double(text.hasPrefix("+") ? String(text.dropFirst()) : text), value.isFinite else {
                    throw Refusal(detail: "The YAML number \(Self.shown(text)) is not a finite number.")
                }
                // The text as written when it is JSON's own spelling (keeps `2.0` a number).
                let json = Self.isJSONNumber(text) ? text : String(value)
                out.append(contentsOf: Array(json.utf8))
            default:
                // Strings, and anything tagged otherwise (`!!timestamp`, custom tags): its text.
                append(string: text)
            }
        }

        private mutating func append(string: String) {
            out.append(contentsOf: Array(EventFrame.json(string).utf8))
        }

        static func integer(_ text: String) -> Int64? {
            if text.hasPrefix("0x") { return Int64(text.dropFirst(2), radix: 16) }
            if text.hasPrefix("0o") { return Int64(text.dropFirst(2), radix: 8) }
            return Int64(text.hasPrefix("+") ? String(text.dropFirst()) : text)
        }

        static func isJSONNumber(_ text: String) -> Bool {
            let bytes = Array(text.utf8)
            guard let first = bytes.first else { return false }
            let body = first == UInt8(ascii: "-") ? bytes.dropFirst() : bytes[...]
            guard let lead = body.first, (48...57).contains(lead) else { return false }
            if lead == 48, body.count > 1, (48...57).contains(body[body.startIndex + 1]) { return false }
            guard let dot = body.firstIndex(of: UInt8(ascii: ".")) else { return true }
            return dot + 1 < body.endIndex && (48...57).contains(body[dot + 1])
        }

        static func shown(_ text: String) -> String {
            text.unicodeScalars.count > 40 ? "'" + String(String.UnicodeScalarView(text.unicodeScalars.prefix(40))) + "…'" : "'\(text)'"
        }
    }

    private static func describe(_ error: any Error) -> String {
        let text = String(describing: error)
        // libyaml's messages quote the document around the mark; keep the first lines.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true).prefix(3)
        let joined = lines.joined(separator: " ")
        return joined.unicodeScalars.count > 300 ? String(String.UnicodeScalarView(joined.unicodeScalars.prefix(300))) + "…" : joined
    }
}
