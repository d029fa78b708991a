public import Foundation

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
