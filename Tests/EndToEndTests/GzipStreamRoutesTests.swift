import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Every rule of `StreamRoutesTests` again, against the real binary over sockets, on streams whose
/// requests say `Accept-Encoding: gzip`: each stream is gzip-coded by its worker and read through
/// a real gzip decoder as its bytes arrive, so snapshot, live events, resume, `reset` and
/// isolation are held on the wire to exactly what the routes do in-process (API.md "Caching and
/// compression").
final class GzipStreamRoutesTests: StreamRoutesTests {
    override class var live: Bool { true }

    override func setUpWithError() throws {
        StreamTestSettings.acceptEncoding = "gzip"
        try super.setUpWithError()
    }

    override func tearDown() {
        StreamTestSettings.acceptEncoding = nil
        super.tearDown()
    }

    /// The suite is not identity in disguise: its streams are gzip-coded, over a socket.
    func test_streams_in_this_suite_are_gzip() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let stream = try server.openEventStream("/preferences/age/events")
        XCTAssertEqual(stream.reply.header("Content-Encoding"), "gzip")
        XCTAssertTrue(stream.isGzip)
        XCTAssertEqual(try stream.nextEvent().value?["value"], 5)
    }
}
