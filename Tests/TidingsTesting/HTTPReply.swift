public import Foundation
public import TestFixtures

extension HTTPReply {
    /// Every value of a header, case-insensitive, in order.
    public func headerValues(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }
    /// `Tidings-Revision` as a number.
    public var revisionHeader: UInt64? { header("Tidings-Revision").flatMap { UInt64($0) } }
    /// The `ETag` with its quotes removed (nil unless it is a quoted tag).
    public var etagRevision: UInt64? {
        guard let tag = header("ETag"), tag.count >= 2, tag.hasPrefix("\""), tag.hasSuffix("\"") else { return nil }
        return UInt64(tag.dropFirst().dropLast())
    }
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
