import Foundation
import XCTest
@testable import TidingsAPI

/// The sample feed is a resource file read at start-up: it is found beside the executable and
/// is a feed of posts the loader accepts.
final class SampleFeedTests: XCTestCase {
    func testTheShippedFeedLoadsAndDecodesAsPosts() throws {
        let feed = try SampleFeed.load()
        let posts = try Post.decodeFeed(Data(feed.body))
        XCTAssertEqual(posts.count, 8)
        XCTAssertEqual(posts.first?.title, "Settings that announce themselves")
    }
}
