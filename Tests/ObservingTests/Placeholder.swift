import XCTest
final class ObservingTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
