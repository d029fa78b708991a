import Foundation

/// Structural readings of a reply for assertions: a header's list items, an authentication
/// challenge's parameters, a raw response's head — so tests compare values, not substrings.
extension HTTPReply {
    /// The items of a comma-separated list header (`Allow`, `Vary`, `Access-Control-Allow-*`)
    /// over all its fields, trimmed, in order.
    public func headerList(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }
            .flatMap { $0.value.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    /// An authentication challenge (`WWW-Authenticate: Bearer realm="x", error="y"`): its scheme
    /// and its parameters, quoted strings unquoted. nil without the header.
    public func challenge(_ name: String = "WWW-Authenticate") -> Challenge? {
        header(name).map(Challenge.init)
    }

    /// A response as raw text (status line, header fields, a blank line, the body as sent: not
    /// de-chunked). nil when the status line is not `HTTP/x.y NNN ...`.
    public static func parse(raw text: String) -> RawReply? {
        let (head, body): (Substring, Substring)
        if let end = text.range(of: "\r\n\r\n") {
            (head, body) = (text[..<end.lowerBound], text[end.upperBound...])
        } else {
            (head, body) = (text[...], "")
        }
        var lines = head.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].starts(with: "HTTP/"), let status = Int(statusLine[1]) else { return nil }
        var reply = HTTPReply(status: status, headers: [], body: Array(body.utf8))
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            reply.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return RawReply(version: String(statusLine[0]), reply: reply)
    }
}

/// A raw response read by ``HTTPReply/parse(raw:)``: its HTTP version and the reply.
public struct RawReply: Sendable {
    public let version: String
    public let reply: HTTPReply

    /// The body as the payload it carries: de-chunked when it is chunked (the complete chunks
    /// so far: a stream read part way), else as sent.
    public var payload: [UInt8] {
        guard reply.header("Transfer-Encoding")?.lowercased() == "chunked" else { return reply.body }
        var payload: [UInt8] = []
        var rest = reply.body[...]
        while let lineEnd = rest.indices.first(where: { rest[$0] == 13 && rest.index(after: $0) < rest.endIndex && rest[rest.index(after: $0)] == 10 }),
              let size = Int(String(decoding: rest[..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16), size > 0 {
            let start = lineEnd + 2
            guard start + size <= rest.endIndex else { break }
            payload += rest[start..<(start + size)]
            rest = rest[min(rest.endIndex, start + size + 2)...]
        }
        return payload
    }
}

/// `scheme param="value", param=token` (RFC 9110 §11.6.1).
public struct Challenge: Sendable, Equatable {
    public let scheme: String
    public let parameters: [String: String]

    public init(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let schemeEnd = trimmed.firstIndex(of: " ") ?? trimmed.endIndex
        scheme = String(trimmed[..<schemeEnd])
        var parameters: [String: String] = [:]
        var rest = trimmed[schemeEnd...].drop { $0 == " " }
        while let equals = rest.firstIndex(of: "=") {
            let name = rest[..<equals].trimmingCharacters(in: CharacterSet(charactersIn: ", "))
            rest = rest[rest.index(after: equals)...]
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                while let c = rest.first {
                    rest = rest.dropFirst()
                    if escaped { value.append(c); escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { break } else { value.append(c) }
                }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            parameters[name.lowercased()] = value
            rest = rest.drop { $0 == "," || $0 == " " }
        }
        self.parameters = parameters
    }
}

extension HTTPReply {
    /// A media-type header (`Content-Type: text/plain; version=0.0.4; charset=utf-8`): the type
    /// lower-cased and its parameters (names lower-cased, quotes removed). nil without the header.
    public func mediaType(_ name: String = "Content-Type") -> (type: String, parameters: [String: String])? {
        guard let value = header(name) else { return nil }
        var parts = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let type = parts.removeFirst().lowercased()
        var parameters: [String: String] = [:]
        for part in parts {
            guard let equals = part.firstIndex(of: "=") else { continue }
            parameters[part[..<equals].lowercased()] = part[part.index(after: equals)...].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return (type, parameters)
    }

    /// An `ETag` read as RFC 9110 says: weak or strong, and its opaque tag without the quotes.
    /// nil without the header or when it is not a well-formed entity tag.
    public func entityTag(_ name: String = "ETag") -> (weak: Bool, opaque: String)? {
        guard var value = header(name)?[...] else { return nil }
        let weak = value.starts(with: "W/")
        if weak { value = value.dropFirst(2) }
        guard value.count >= 2, value.first == "\"", value.last == "\"" else { return nil }
        return (weak, String(value.dropFirst().dropLast()))
    }
}

/// The samples of a Prometheus text exposition: `name{labels}` exactly as printed → value
/// (comment lines skipped; a line that is not `series value` is left out).
public enum MetricSamples {
    public static func parse(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where line.first != "#" {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return samples
    }
}

/// The text of an event stream read as SSE lines, for tests below the SSE client: each block
/// (up to a blank line) and each `name: value` field, in order (`:` comments as name "").
public enum EventStreamText {
    /// The blocks, without their terminating blank line (an unterminated tail is left out).
    public static func blocks(_ text: String) -> [String] {
        var blocks = text.components(separatedBy: "\n\n")
        blocks.removeLast()
        return blocks
    }

    /// Every field line of the complete blocks: `retry: 1500` is ("retry", "1500").
    public static func fields(_ text: String) -> [(name: String, value: String)] {
        blocks(text).flatMap { $0.split(separator: "\n") }.map { line in
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            var value = parts.count > 1 ? String(parts[1]) : ""
            if value.first == " " { value.removeFirst() }
            return (String(parts[0]), value)
        }
    }
}
