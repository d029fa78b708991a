import Foundation
import XCTest
@testable import TidingsStore

/// Schedules in SQLite (``ScheduleStore``): two stores on one file never both claim a schedule,
/// only the holder of a live claim finishes it, a claimed schedule cannot be cancelled, and
/// the bounds on what is pending hold.
final class ScheduleStoreTests: XCTestCase {
    private func schedule(_ id: String, at: Int64, body: String = #"{"preferences":{"age":1}}"#) -> StoredSchedule {
        StoredSchedule(id: id, environment: "default", at: at, body: body, createdBy: "api", createdAt: 0)
    }

    func testTwoStoresOnOneFileClaimEachDueScheduleOnce() async throws {
        let directory = makeTemporaryDirectory(self)
        let a = try SQLiteStore(directory: directory), b = try SQLiteStore(directory: directory)
        let ids = (0..<40).map { String(format: "%016x", $0) }
        for id in ids { try await a.createSchedule(schedule(id, at: 100), limits: ScheduleLimits()) }
        try await a.createSchedule(schedule("ffffffffffffffff", at: 10_000), limits: ScheduleLimits())
        async let fromA = a.claimDueSchedules(now: 200, holder: "A", leaseMicroseconds: 1_000, limit: 7)
        async let fromB = b.claimDueSchedules(now: 200, holder: "B", leaseMicroseconds: 1_000, limit: 7)
        var claimed = try await fromA.map(\.id) + fromB.map(\.id)
        while true {
            let more = try await b.claimDueSchedules(now: 200, holder: "B", leaseMicroseconds: 1_000, limit: 7)
            if more.isEmpty { break }
            claimed += more.map(\.id)
        }
        XCTAssertEqual(claimed.sorted(), ids, "every due schedule once, the later one not yet")
        let next = try await a.nextScheduleTime()
        XCTAssertEqual(next, 100)

        // Only the holder finishes; a claimed schedule cannot be cancelled until its claim expires.
        let first = try await a.schedule(id: ids[0])
        XCTAssertEqual(first?.state, .pending)
        let holder = try await a.claimDueSchedules(now: 1_300, holder: "C", leaseMicroseconds: 1_000, limit: 1).first
        XCTAssertEqual(holder?.id, ids[0], "an expired claim is taken again")
        guard case .notPending = try await b.cancelSchedule(id: ids[0], now: 1_400) else { return XCTFail("cancelled while claimed") }
        let byA = try await a.finishSchedule(id: ids[0], holder: "A", state: .applied, revision: 3, detail: nil,
                                             late: false, now: 1_500, limits: ScheduleLimits())
        XCTAssertFalse(byA, "A's claim expired and C holds it")
        let byC = try await a.finishSchedule(id: ids[0], holder: "C", state: .applied, revision: 3, detail: nil,
                                             late: true, now: 1_500, limits: ScheduleLimits())
        XCTAssertTrue(byC)
        let applied = try await b.schedule(id: ids[0])
        XCTAssertEqual(applied?.state, .applied)
        XCTAssertEqual(applied?.revision, 3)
        XCTAssertEqual(applied?.late, true)
        guard case .cancelled = try await b.cancelSchedule(id: "ffffffffffffffff", now: 1_500) else { return XCTFail("not cancelled") }
        guard case .notFound = try await b.cancelSchedule(id: "0123456789abcdef", now: 1_500) else { return XCTFail("found") }
        await a.close()
        await b.close()
    }

    func testPendingSchedulesAreBoundedInNumberAndBytes() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        let limits = ScheduleLimits(maxPending: 2, maxPendingBytes: 100, keepFinished: 1)
        try await store.createSchedule(schedule("a", at: 1), limits: limits)
        do {
            try await store.createSchedule(schedule("b", at: 1, body: String(repeating: "x", count: 90)), limits: limits)
            XCTFail("over the bytes")
        } catch ScheduleStoreError.tooManyPendingBytes {}
        try await store.createSchedule(schedule("c", at: 1), limits: limits)
        do {
            try await store.createSchedule(schedule("d", at: 1), limits: limits)
            XCTFail("over the count")
        } catch ScheduleStoreError.tooManyPending {}
        let pending = try await store.schedules(environment: "default", state: .pending, limit: 10)
        XCTAssertEqual(pending.map(\.id), ["a", "c"])
        await store.close()
        do { _ = try await store.nextScheduleTime(); XCTFail("a closed store was read") } catch StoreError.closed {}
    }
}

/// A schedule's write and its outcome commit in one transaction (``StoreWrite/schedule``): a
/// commit that fails at its very end — as a failed COMMIT, or a crash just before it, would —
/// leaves neither the write nor `applied`, so the schedule is still there to apply, once.
final class ScheduleCommitTests: XCTestCase {
    private struct InjectedFailure: Error {}

    func testAScheduleAndItsWriteCommitTogetherOrNotAtAll() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        let id = "00000000000000aa"
        try await store.createSchedule(StoredSchedule(id: id, environment: "default", at: 100, body: "{}", createdBy: "api", createdAt: 0),
                                       limits: ScheduleLimits())
        let claimed = try await store.claimDueSchedules(now: 200, holder: "A", leaseMicroseconds: 60_000_000, limit: 1)
        XCTAssertEqual(claimed.map(\.id), [id])
        var write = StoreWrite([.setPreference(key: "age", json: "7", defaultJSON: "5")], actor: "api")
        write.schedule = ScheduleCompletion(id: id, holder: "A", late: false)

        store.writer.queue.sync { store.writer.beforeCommit = { _ in throw InjectedFailure() } }
        do {
            _ = try await store.commit(write)
            XCTFail("the injected failure did not fail the commit")
        } catch {}
        store.writer.queue.sync { store.writer.beforeCommit = nil }
        let nothing = try await store.changes(after: 0, limit: 10)
        XCTAssertEqual(nothing, [])
        let pending = try await store.schedule(id: id)
        XCTAssertEqual(pending?.state, .pending, "no outcome without its write")

        let changes = try await store.commit(write)
        XCTAssertEqual(changes.map(\.revision), [1])
        let applied = try await store.schedule(id: id)
        XCTAssertEqual(applied?.state, .applied)
        XCTAssertEqual(applied?.revision, 1)
        await store.close()
    }
}
