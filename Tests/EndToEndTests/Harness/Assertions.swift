import Foundation
import XCTest
import TestFixtures
import TidingsTesting

extension EventStreamReader {
    /// Asserts no event arrives within `seconds` (comments and `retry:` are allowed).
    func assertNoEvent(within seconds: Double, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let event = try nextEvent(timeout: seconds)
            XCTFail("unexpected event \(event)", file: file, line: line)
        } catch HTTPConnectionError.timeout {
            // Expected: nothing arrived.
        } catch {
            XCTFail("stream failed: \(error)", file: file, line: line)
        }
    }
}
