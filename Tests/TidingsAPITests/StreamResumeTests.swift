import EventHTTP
import XCTest
@testable import TidingsAPI

/// Where a stream resumes, in-process: the `Last-Event-ID` / `lastEventId` parsing, what the
/// replay history can answer without a gap, and what a stream's coverage lets through.
@MainActor
final class StreamResumeTests: XCTestCase {
    private typealias ResumePoint = StreamHub.ResumePoint

    // MARK: Resume point

    func testNoResumePointWithoutHeaderOrQuery() async throws {
        XCTAssertEqual(try StreamHub.resumePoint(header: nil, query: nil), ResumePoint.none)
    }

    func testHeaderWinsOverQuery() async throws {
        XCTAssertEqual(try StreamHub.resumePoint(header: "7", query: "3"), .after(7))
        XCTAssertEqual(try StreamHub.resumePoint(header: nil, query: "3"), .after(3))
        XCTAssertEqual(try StreamHub.resumePoint(header: " 12 ", query: nil), .after(12), "spaces around are tolerated")
    }

    func testMalformedResumePointIsABadRequestEvenWhenTheOtherIsGood() async {
        for bad in ["", "-1", "1.5", "abc", "0x10", "123456789012345678901"] {
            // (typed throws: a ProblemDetails, which the route answers as a 400)
            XCTAssertThrowsError(try StreamHub.resumePoint(header: bad, query: nil), bad)
            XCTAssertThrowsError(try StreamHub.resumePoint(header: "5", query: bad), "query \(bad)")
        }
    }

    func testTwentyDigitsBeyondUInt64AreOutOfRangeNotAnError() async throws {
        XCTAssertEqual(try StreamHub.resumePoint(header: "18446744073709551615", query: nil), .after(UInt64.max))
        XCTAssertEqual(try StreamHub.resumePoint(header: "18446744073709551616", query: nil), .beyondRange)
        XCTAssertEqual(try StreamHub.resumePoint(header: "99999999999999999999", query: nil), .beyondRange)
    }

    // MARK: Replay history

    private func entry(_ revision: UInt64, _ topic: EventTopic, bytes: Int = 10) -> JournalEntry {
        JournalEntry(revision: revision, topic: topic, frame: [UInt8](repeating: 0x61, count: bytes))
    }

    private func revisions(_ entries: [JournalEntry]?) -> [UInt64]? { entries?.map(\.revision) }

    func testResumeReplaysWhatCameAfterTheId() async {
        let journal = EventJournal(capacity: 10, maxBytes: 1 << 20, floor: 0)
        for revision: UInt64 in 1...5 { journal.append(entry(revision, .things)) }
        XCTAssertEqual(revisions(journal.entries(after: 2, current: 5, where: { _ in true })), [3, 4, 5])
        XCTAssertEqual(revisions(journal.entries(after: 5, current: 5, where: { _ in true })), [], "up to date")
        XCTAssertEqual(revisions(journal.entries(after: 0, current: 5, where: { _ in true })), [1, 2, 3, 4, 5])
    }

    func testResumeFromTheFutureOrFromBeforeTheHistoryNeedsAReset() async {
        let journal = EventJournal(capacity: 3, maxBytes: 1 << 20, floor: 0)
        for revision: UInt64 in 1...5 { journal.append(entry(revision, .things)) }
        // 1 and 2 were evicted: the floor is 2, so a resume after 2 is still answerable.
        XCTAssertEqual(journal.floor, 2)
        XCTAssertEqual(revisions(journal.entries(after: 2, current: 5, where: { _ in true })), [3, 4, 5])
        XCTAssertNil(journal.entries(after: 1, current: 5, where: { _ in true }), "a gap")
        XCTAssertNil(journal.entries(after: 6, current: 5, where: { _ in true }), "newer than current")
    }

    func testHistoryIsBoundedInBytes() async {
        let journal = EventJournal(capacity: 100, maxBytes: 25, floor: 0)
        for revision: UInt64 in 1...4 { journal.append(entry(revision, .things, bytes: 10)) }
        XCTAssertLessThanOrEqual(journal.byteCount, 25)
        XCTAssertEqual(journal.count, 2)
        XCTAssertNil(journal.entries(after: 1, current: 4, where: { _ in true }))
        XCTAssertEqual(revisions(journal.entries(after: 2, current: 4, where: { _ in true })), [3, 4])
    }

    func testResumeReplaysOnlyWhatTheStreamCovers() async {
        let journal = EventJournal(capacity: 10, maxBytes: 1 << 20, floor: 0)
        journal.append(entry(1, .preference("age")))
        journal.append(entry(2, .things))
        journal.append(entry(3, .preference("name")))
        journal.append(entry(4, .posts))
        let coverage = StreamCoverage(preferenceKeys: ["age", "name"], things: false, posts: true)
        XCTAssertEqual(revisions(journal.entries(after: 0, current: 4, where: coverage.covers)), [1, 3, 4])
        let things = StreamCoverage(things: true)
        XCTAssertEqual(revisions(journal.entries(after: 0, current: 4, where: things.covers)), [2])
    }

    func testAResetForgetsTheHistory() async {
        let journal = EventJournal(capacity: 10, maxBytes: 1 << 20, floor: 0)
        for revision: UInt64 in 1...3 { journal.append(entry(revision, .things)) }
        journal.reset(floor: 10)
        XCTAssertNil(journal.entries(after: 3, current: 10, where: { _ in true }))
        XCTAssertEqual(revisions(journal.entries(after: 10, current: 10, where: { _ in true })), [])
    }
}
