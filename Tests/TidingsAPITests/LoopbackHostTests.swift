@testable import TidingsAPI
import XCTest

/// The `Host` check of a loopback listener: the byte-level fast path for the values local
/// clients send says yes only where the general parse does.
final class LoopbackHostTests: XCTestCase {
    func testCommonValuesTakeTheFastPathAndAgreeWithTheGeneralOne() {
        let accepted = ["127.0.0.1", "127.0.0.1:8080", "localhost", "localhost:1", "[::1]", "[::1]:65535"]
        for value in accepted {
            XCTAssertTrue(LoopbackHost.isCommonLoopback(value), value)
            XCTAssertTrue(LoopbackHost.hostName(of: value).map(LoopbackHost.isLoopback(host:)) ?? false, value)
        }
        let notFast = ["127.0.0.10", "127.0.0.1:", "127.0.0.1:80a", "127.0.0.1.evil.example", "localhost.evil.example",
                       "localhostx", "[::1]x", "evil.example", "LOCALHOST", "127.0.0.1:1234567", ""]
        for value in notFast {
            XCTAssertFalse(LoopbackHost.isCommonLoopback(value), value)
        }
        // The general path still decides the rest.
        XCTAssertTrue(LoopbackHost.hostName(of: "LOCALHOST").map(LoopbackHost.isLoopback(host:)) ?? false)
        XCTAssertTrue(LoopbackHost.hostName(of: "127.0.0.10").map(LoopbackHost.isLoopback(host:)) ?? false)
        XCTAssertFalse(LoopbackHost.hostName(of: "localhost.evil.example").map(LoopbackHost.isLoopback(host:)) ?? true)
        XCTAssertNil(LoopbackHost.hostName(of: "127.0.0.1:80a"))
    }
}
