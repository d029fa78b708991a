import Foundation

/// What one HTTP exchange on a libcurl handle has received, and the bounds it is read under.
/// libcurl hands over the head line by line and the body piece by piece, from the transfer's
/// own thread, only as fast as these methods take it: returning false makes libcurl abort the
/// exchange at once, so nothing past a bound is ever read from the socket or kept.
///
/// Bounds and rules, each checked before the bytes are kept:
/// - the head (status line and fields of every response, interim ones included) is at most
///   ``maxHeadBytes``;
/// - a final answer in any `Content-Encoding` but identity is refused before its body is read
///   (the client asks for identity and never decompresses, so a gzip bomb stays a small
///   compressed body that is not read at all);
/// - an announced `Content-Length` over the limit is refused before the body is read, and a
///   body without one is cut off at the first piece that would take it past the limit.
///
/// Used by one thread at a time (the transfer's).
final class CurlReceiver {
    /// All head lines of one exchange together: far more than any feed sends.
    static let maxHeadBytes = 64 << 10

    /// `maxBodyBytes` of the request (nil: unbounded).
    let limit: Int?
    private(set) var status = 0
    /// Field names lower-cased; a repeated field's values joined with ", ".
    private(set) var headers: [String: String] = [:]
    private(set) var body = Data()
    /// Why a bound or rule stopped the exchange (libcurl then reports a write error).
    private(set) var failure: TransferFailure?
    private var headBytes = 0

    init(limit: Int?) { self.limit = limit }

    /// Starts over for the next exchange (a followed redirect).
    func reset() {
        status = 0
        headers = [:]
        body = Data()
        failure = nil
        headBytes = 0
    }

    /// True for a status that sends the client elsewhere (when it names where).
    var isRedirect: Bool { [301, 302, 303, 307, 308].contains(status) && headers["location"] != nil }

    /// One line of the head: a status line, a field, or the blank line that ends a head.
    func receiveHead(_ line: UnsafeRawBufferPointer) -> Bool {
        headBytes += line.count
        guard headBytes <= Self.maxHeadBytes else {
            return fail(.refused("its header section is larger than \(Self.maxHeadBytes >> 10) KiB"))
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if text.hasPrefix("HTTP/") {
            // A new response (after an interim 1xx): its fields replace the interim one's.
            headers = [:]
            let parts = text.split(separator: " ", maxSplits: 2)
            status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            return true
        }
        if text.isEmpty { return headEnded() }
        guard let colon = text.firstIndex(of: ":") else { return true }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        return true
    }

    /// The head of a final answer is complete: refuse what cannot be bounded, make room for the body.
    private func headEnded() -> Bool {
        guard status >= 200, !isRedirect else { return true }
        if let encoding = headers["content-encoding"]?.lowercased(), !encoding.isEmpty, encoding != "identity" {
            return fail(.refused("it came with Content-Encoding '\(encoding.prefix(64))' although an uncompressed body was asked for"))
        }
        let announced = headers["content-length"].flatMap { Int($0) }
        if let limit, let announced, announced > limit { return fail(.bodyTooLarge(limit: limit)) }
        // Room for the whole body at once, so appending never copies it. Pages are only made
        // resident as they are written, so reserving the limit for a body of unknown length
        // costs no memory it does not use.
        if let room = announced ?? limit { body.reserveCapacity(min(room, limit ?? room)) }
        return true
    }

    /// One piece of the body.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let limit, body.count + bytes.count > limit {
            body = Data()
            return fail(.bodyTooLarge(limit: limit))
        }
        body.append(contentsOf: bytes)
        return true
    }

    private func fail(_ failure: TransferFailure) -> Bool {
        if self.failure == nil { self.failure = failure }
        return false
    }
}
