import EventHTTP
import HTTPTypes
import TidingsStore
import XCTest
@testable import TidingsAPI

/// What each store error becomes for the client: a refusal of what was sent is a 4xx, only the
/// store's own trouble is a 503 — never a 500.
@MainActor
final class WriteFailureTests: XCTestCase {
    private func status(_ error: StoreError) -> Int {
        Problems.forWrite(WritePipeline.failure(error)).status.code
    }

    func testStoreRefusalsOfWhatWasSentAre4xxAndTroubleIs503() async {
        XCTAssertEqual(status(.preconditionFailed(key: "age", current: 3)), 412)
        XCTAssertEqual(status(.duplicateThing("YOLO")), 409)
        XCTAssertEqual(status(.thingNotFound("YOLO")), 404)
        XCTAssertEqual(status(.invalidJSON(key: "age")), 422)
        XCTAssertEqual(status(.unstorableText("a thing")), 422)
        XCTAssertEqual(status(.unavailable("connection refused")), 503)
        XCTAssertEqual(status(.closed), 503)
        XCTAssertEqual(status(.database("disk I/O error")), 503)
        let detail = Problems.forWrite(WritePipeline.failure(StoreError.unstorableText("the reason"))).detail
        XCTAssertEqual(detail, "The text of the reason holds U+0000, which cannot be stored.")
    }
}
