import EventHTTP
import Foundation
import HTTPTypes

extension Request {
    /// The entity tags of a conditional header (`If-Match`, `If-None-Match`): `nil` when the
    /// header is absent, `["*"]` for a wildcard, otherwise the quoted tags with quotes removed
    /// (weak `W/` prefixes and the gzip representation's `-gzip` dropped: revisions are
    /// compared by value).
    func entityTags(_ header: HTTPField.Name) -> [String]? {
        guard let raw = headers.first(header) else { return nil }
        return raw.split(separator: ",").map { part in
            var tag = part.trimmingCharacters(in: .whitespaces)
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            if tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") { tag = String(tag.dropFirst().dropLast()) }
            // The gzip representation's tag names the same revision (`HTTPCaching`): a client
            // that read a compressed answer may write with its ETag.
            if tag.hasSuffix("-gzip") { tag.removeLast(5) } else if tag.hasSuffix("-br") { tag.removeLast(3) }
            return tag
        }
    }
}
