import HTTPTypes
import Foundation
import EventHTTP

/// What a request's `Authorization` header (or, without one, OFREP's `X-API-Key`) presents.
enum PresentedCredential {
    /// No `Authorization` header at all.
    case none
    /// `Authorization: Bearer <token>` (scheme case-insensitive, RFC 6750 §2.1).
    case bearer([UInt8])
    /// Some other scheme, or a Bearer header without a token: a credential, but not one we take.
    case unusable

    /// The credential of `request`. Only the first `Authorization` field counts; without one,
    /// the first `X-API-Key` field (OFREP's API-key scheme) is the token itself.
    init(_ request: Request) {
        guard let header = request.headers.first(.authorization) else {
            if let key = request.headers.first(.xAPIKey) {
                let token = key.trimmingCharacters(in: .whitespaces)
                self = token.isEmpty ? .unusable : .bearer(Array(token.utf8))
            } else {
                self = .none
            }
            return
        }
        let bytes = Array(header.utf8)
        let scheme = Array("bearer".utf8)
        guard bytes.count > scheme.count + 1,
              zip(bytes, scheme).allSatisfy({ ($0 | 0x20) == $1 }),
              bytes[scheme.count] == UInt8(ascii: " ") else {
            self = .unusable
            return
        }
        // One or more spaces after the scheme; surrounding whitespace is not part of the token.
        var token = bytes[(scheme.count + 1)...]
        while let first = token.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { token = token.dropFirst() }
        while let last = token.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { token = token.dropLast() }
        self = token.isEmpty ? .unusable : .bearer(Array(token))
    }
}
