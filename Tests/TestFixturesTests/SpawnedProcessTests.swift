import Foundation
import TestFixtures
import XCTest

/// The one way tests start programs (`tidings` through ``TidingsProcess``, PostgreSQL and nginx
/// through ``FixtureProcess``): what the child gets and what it does not.
final class SpawnedProcessTests: XCTestCase {
    private var files: [URL] = []
    override func tearDown() { files.forEach(TidingsProcess.removeDirectory) }

    private func scratch() -> URL {
        let url = TidingsProcess.temporaryDirectory()
        files.append(url)
        return url
    }

    /// A test's open socket (no close-on-exec, as `socket(2)` makes it) stays out of the child:
    /// a server started while a test holds a client connection or an upstream's listener must
    /// not keep it open, or the test waits for an EOF or a refusal that never comes.
    func testTheChildInheritsNoDescriptorButItsStandardOnes() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThan(fd, 2)
        defer { close(fd) }
        let output = scratch()
        let child = try SpawnedProcess("/bin/sh", ["-c", "if [ -e /proc/self/fd/\(fd) ]; then echo inherited; else echo closed; fi"],
                                       output: output.path)
        XCTAssertEqual(child.wait(timeout: 10), 0)
        XCTAssertEqual(try String(contentsOf: output, encoding: .utf8), "closed\n")
    }

    func testStandardErrorGoesToItsOwnFileAndTheEnvironmentIsTheOneGiven() throws {
        let output = scratch(), errors = scratch()
        let child = try SpawnedProcess("/bin/sh", ["-c", "echo out; echo err >&2; echo \"[$FIXTURE_WORD][$HOME]\""],
                                       output: output.path, errors: errors.path,
                                       environment: ["FIXTURE_WORD": "given", "PATH": "/usr/bin:/bin"])
        XCTAssertEqual(child.wait(timeout: 10), 0)
        XCTAssertEqual(try String(contentsOf: output, encoding: .utf8), "out\n[given][]\n")
        XCTAssertEqual(try String(contentsOf: errors, encoding: .utf8), "err\n")
    }

    func testAKilledChildReportsItsSignal() throws {
        let child = try SpawnedProcess("/bin/sleep", ["30"], output: "/dev/null")
        XCTAssertNil(child.poll())
        child.signal(SIGTERM)
        XCTAssertEqual(child.wait(timeout: 10), 128 + SIGTERM)
        XCTAssertFalse(child.isRunning)
    }
}
