import TestFixtures
import XCTest
@testable import TidingsClient

final class ReconnectPolicyTests: XCTestCase {
    func testDelaysDoubleFromTheServersRetryUpToTheCap() {
        let noJitter = ReconnectPolicy(initialDelay: .seconds(1), maxDelay: .seconds(30), jitter: 0.5, random: { 0 })
        XCTAssertEqual((1...7).map { noJitter.delay(afterFailures: $0, serverRetryMilliseconds: nil) },
                       [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30)])
        // `retry: 3000` replaces the initial delay.
        XCTAssertEqual((1...3).map { noJitter.delay(afterFailures: $0, serverRetryMilliseconds: 3000) },
                       [.seconds(3), .seconds(6), .seconds(12)])
        XCTAssertEqual(noJitter.delay(afterFailures: 1_000, serverRetryMilliseconds: 3000), .seconds(30))
    }

    func testJitterTakesUpToItsShareOff() {
        let most = ReconnectPolicy(initialDelay: .seconds(1), jitter: 0.5, random: { 0.999_999 })
        let delay = most.delay(afterFailures: 3, serverRetryMilliseconds: nil)
        XCTAssertGreaterThan(delay, .milliseconds(2000))
        XCTAssertLessThanOrEqual(delay, .milliseconds(2001))
        let random = ReconnectPolicy(initialDelay: .seconds(1), jitter: 0.5)
        let delays = Set((0..<50).map { _ in random.delay(afterFailures: 2, serverRetryMilliseconds: nil) })
        XCTAssertGreaterThan(delays.count, 1, "the jitter spreads clients out")
        XCTAssertTrue(delays.allSatisfy { $0 >= .seconds(1) && $0 <= .seconds(2) })
    }
}

final class ResumeTrackerTests: XCTestCase {
    func testASnapshotCountsAsSeenOnlyWhenComplete() {
        var tracker = ResumeTracker()
        tracker.expectSnapshot(of: ["preference:a", "preference:b", "things"], afterReset: false)
        tracker.applied("preference:a", id: 10)
        tracker.applied("preference:b", id: 10)
        XCTAssertNil(tracker.resumeID, "cut here, a reconnect must ask for the whole snapshot again")
        tracker.applied("things", id: 10)
        XCTAssertEqual(tracker.resumeID, 10)
        tracker.applied("preference:a", id: 11)
        XCTAssertEqual(tracker.resumeID, 11)
    }

    func testASnapshotOfUnknownSizeEndsWithTheFirstNewerEvent() {
        var tracker = ResumeTracker()
        tracker.expectSnapshot(of: nil, afterReset: true)
        XCTAssertTrue(tracker.inSnapshotAfterReset)
        tracker.applied("preference:a", id: 4)
        XCTAssertNil(tracker.resumeID)
        tracker.applied("preference:a", id: 5)
        XCTAssertEqual(tracker.resumeID, 5)
        XCTAssertFalse(tracker.inSnapshotAfterReset)
    }
}
