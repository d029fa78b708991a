import XCTest
final class EventHTTPTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
