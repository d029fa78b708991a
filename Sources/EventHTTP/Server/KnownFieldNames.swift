import HTTPTypes
import Foundation

/// Request field names as clients commonly spell them, recognised byte for byte: such a name
/// becomes the library's ready-made `HTTPField.Name` instead of being validated and lowercased
/// into two new strings per field per request. Only an exact match counts, so `rawName`
/// stays what the client sent; any other spelling takes the validating initializer.
enum KnownFieldNames {
    private static let names: [(bytes: [UInt8], name: HTTPField.Name)] = [
        "Host", "User-Agent", "Accept", "Accept-Encoding", "Accept-Language", "Connection",
        "Content-Type", "Content-Length", "Authorization", "If-None-Match", "If-Match", "Origin",
        "Cache-Control", "Referer", "Last-Event-ID", "X-Forwarded-For", "X-Real-IP", "X-Forwarded-Proto",
    ].compactMap { spelling in HTTPField.Name(spelling).map { (Array(spelling.utf8), $0) } }

    /// The field name for `bytes` (a name from a clean head); nil when it is not a token.
    static func name(_ bytes: UnsafeRawBufferPointer) -> HTTPField.Name? {
        let length = bytes.count
        for entry in names where entry.bytes.count == length {
            if entry.bytes.withUnsafeBytes({ memcmp($0.baseAddress!, bytes.baseAddress!, length) == 0 }) { return entry.name }
        }
        return HTTPField.Name(String(decoding: bytes, as: UTF8.self))
    }
}
