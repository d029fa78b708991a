import XCTest
@testable import TidingsAPI

/// The one ETag formatter and matcher every conditional route uses.
final class EntityTagTests: XCTestCase {
    func testHeaderIsTheQuotedOpaqueText() {
        XCTAssertEqual(EntityTag(revision: 42).header, #""42""#)
        XCTAssertEqual(EntityTag("sample-feed-v1").header, #""sample-feed-v1""#)
    }

    func testMatchesTheSameTagOrTheWildcardOnly() {
        let tag = EntityTag(revision: 7)
        XCTAssertTrue(tag.isMatched(by: ["7"]))
        XCTAssertTrue(tag.isMatched(by: ["3", "7"]))
        XCTAssertTrue(tag.isMatched(by: ["*"]))
        XCTAssertFalse(tag.isMatched(by: ["70", "07", "\"7\""]))
        XCTAssertFalse(tag.isMatched(by: []))
    }
}
