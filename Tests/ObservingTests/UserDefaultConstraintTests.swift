import XCTest
@testable import Observing

/// A ``UserDefault`` property keeps its declaration's constraints.
@MainActor
final class UserDefaultConstraintTests: XCTestCase {
    func testAnOutOfConstraintWriteThroughAPropertyIsIgnored() async {
        let owner = TestPreferences()
        owner.level = 99
        XCTAssertEqual(owner.level, 1)
        owner.level = 7
        XCTAssertEqual(owner.level, 7)
    }
}
