import Foundation
import XCTest
import TestFixtures

/// A fresh directory under the system temp dir, removed when the test ends.
func makeTemporaryDirectory(_ test: XCTestCase, file: StaticString = #filePath, line: UInt = #line) -> URL {
    let url = FileManager.default.temporaryDirectory
        .appendingPathComponent("tidings-store-\(UUID().uuidString)", isDirectory: true)
    test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
    return url
}

/// Waits (polling, with a deadline) until `condition` holds; fails the test if it never does.
func waitUntil(
    timeout: TimeInterval = 10, _ what: String, file: StaticString = #filePath, line: UInt = #line,
    _ condition: () throws -> Bool
) async rethrows {
    if try await !eventually(within: timeout, every: 0.001, { () async throws in try condition() }) {
        XCTFail("timed out waiting for \(what)", file: file, line: line)
    }
}
