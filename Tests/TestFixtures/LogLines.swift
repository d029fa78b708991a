import Foundation

/// One line of the server's log as swift-log's `StreamLogHandler` writes it:
/// `2026-11-27T14:34:28+0000 info tidings: key=value key=value [source] message`.
/// Tests compare a line's fields (its message whole, a metadata value) instead of searching the
/// log text.
public struct LogLine: Sendable, Equatable {
    public let level: String
    public let metadata: [String: String]
    public let source: String
    public let message: String

    /// The log lines of `text`, in order; lines in another shape (the listening line, an
    /// argument parser's error) are left out.
    public static func parse(_ text: String) -> [LogLine] {
        text.split(separator: "\n").compactMap { LogLine(String($0)) }
    }

    /// nil when `line` is not a `StreamLogHandler` line.
    public init?(_ line: String) {
        let fields = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
        guard fields.count == 4, fields[2].hasSuffix(":") else { return nil }
        // Metadata (`key=value` words, values without spaces), then `[source] message`; a
        // value may hold brackets (`corsOrigins=[]`), a source is a word.
        // A word without `=` continues the previous value (`feedURL=(built-in sample)`).
        var metadata: [String: String] = [:]
        var lastKey: String?
        var rest = fields[3][...]
        while !rest.isEmpty, rest.first != "[" {
            let word = rest.prefix { $0 != " " }
            if let equals = word.firstIndex(of: "=") {
                lastKey = String(word[..<equals])
                metadata[lastKey!] = String(word[word.index(after: equals)...])
            } else if let lastKey {
                metadata[lastKey, default: ""] += " " + word
            } else {
                return nil
            }
            rest = rest.dropFirst(word.count).drop { $0 == " " }
        }
        guard rest.first == "[", let close = rest.firstIndex(of: "]") else { return nil }
        level = String(fields[1])
        self.metadata = metadata
        source = String(rest[rest.index(after: rest.startIndex)..<close])
        message = String(rest[rest.index(after: close)...].drop { $0 == " " })
    }
}
