import XCTest
final class TidingsStoreTestsPlaceholder: XCTestCase { func testBuilds() { XCTAssertTrue(true) } }
