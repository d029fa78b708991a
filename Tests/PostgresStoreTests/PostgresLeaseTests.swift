import Foundation
import XCTest
@testable import TidingsStore

final class PostgresLeaseTests: PostgresTestCase {
    func testOneHolderAtATimeUntilTheLeaseExpires() async throws {
        let url = try makeDatabase()
        let a = try await makeStore(url)
        let b = try await makeStore(url)
        var held = try await a.acquireLease("posts", holder: "a", duration: .seconds(1))
        XCTAssertTrue(held)
        held = try await b.acquireLease("posts", holder: "b", duration: .seconds(1))
        XCTAssertFalse(held, "A holds it")
        held = try await a.acquireLease("posts", holder: "a", duration: .seconds(1))
        XCTAssertTrue(held, "A renews")
        held = try await b.acquireLease("other", holder: "b", duration: .seconds(1))
        XCTAssertTrue(held, "another name is another lease")
        await waitUntil("A's lease to expire so B gets it", timeout: 5) {
            (try? await b.acquireLease("posts", holder: "b", duration: .seconds(60))) == true
        }
        held = try await a.acquireLease("posts", holder: "a", duration: .seconds(1))
        XCTAssertFalse(held, "now B holds it")
    }
}
