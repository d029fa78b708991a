public import Foundation
public import TestFixtures

/// A response as a test sees it, whichever transport carried it (``TidingsTransport``): the
/// status, the header fields in order, the body bytes.
public struct HTTPReply: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// First value of a header, case-insensitive.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
    /// Every value of a header, case-insensitive, in order.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a ``JSONValue`` (nil when it is not JSON): compare bodies as values.
    public var value: JSONValue? { JSONValue.parse(body) }
    /// The body decoded as `T`.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: Data(body)) }
    /// `Tidings-Revision` as a number.
    public var revisionHeader: UInt64? { header("Tidings-Revision").flatMap { UInt64($0) } }
    /// The `ETag` with its quotes removed (nil unless it is a quoted tag).
    public var etagRevision: UInt64? {
        guard let tag = header("ETag"), tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
        return UInt64(tag.dropFirst().dropLast())
    }
}

/// Why a transport gave no answer: nothing came within the time allowed, or the other side
/// ended (a stream the server closed).
public enum TransportError: Error, Equatable {
    case timeout
    case closed
}

/// A temporary directory a test removes itself (data directories that outlive one server,
/// `--preferences` files).
public final class TemporaryDirectory {
    public let url: URL
    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    /// Writes `text` to `name` inside the directory; returns its path.
    public func file(_ name: String, _ text: String) throws -> String {
        let file = url.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file.path
    }
}
