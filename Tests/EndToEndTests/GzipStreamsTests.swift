import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Every rule of `StreamsTests` again, on streams whose requests say `Accept-Encoding: gzip`:
/// each stream is gzip-coded and read through a real gzip decoder as its bytes arrive, so
/// snapshot, live events, resume, `reset`, the slow-reader cut-off, fan-out and heartbeats are
/// held to exactly what an identity stream does (API.md "Caching and compression").
final class GzipStreamsTests: StreamsTests {
    override func setUpWithError() throws {
        StreamTestSettings.acceptEncoding = "gzip"
        try super.setUpWithError()
    }

    override func tearDown() {
        StreamTestSettings.acceptEncoding = nil
        super.tearDown()
    }

    /// The suite is not identity in disguise: its streams are gzip-coded.
    func test_streams_in_this_suite_are_gzip() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let stream = try server.openEventStream("/preferences/age/events")
        XCTAssertEqual(stream.reply.header("Content-Encoding"), "gzip")
        XCTAssertEqual(stream.reply.header("Vary"), "Accept-Encoding")
        XCTAssertTrue(stream.isGzip)
        XCTAssertEqual(try stream.nextEvent().json?["value"] as? Int, 5)
    }
}
