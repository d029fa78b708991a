import Foundation
import XCTest
@testable import TidingsStore

/// Schedules on the store (``ScheduleStore``): a schedule's write records its outcome in its own
/// transaction (``StoreWrite/schedule``), so it is applied exactly once — also when the instance
/// that claimed it stalls past its lease and another instance takes the claim.
extension ChangeStoreConformance {
    static func aScheduleIsAppliedByItsOwnWriteExactlyOnce(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let openedA = try await maker.open(database, limits: ChangeStoreLimits())
        let openedB = try await maker.open(database, limits: ChangeStoreLimits())
        let a = try XCTUnwrap(openedA as? any ChangeStore & ScheduleStore)
        let b = try XCTUnwrap(openedB as? any ChangeStore & ScheduleStore)
        let (one, two, three) = ("0000000000000001", "0000000000000002", "0000000000000003")
        for id in [one, two, three] {
            try await a.createSchedule(StoredSchedule(id: id, environment: "default", at: 100, body: "{}", createdBy: "api", createdAt: 0),
                                       limits: ScheduleLimits())
        }

        // A claims the first with a short lease and stalls past it; B takes the claim over.
        let byA = try await a.claimDueSchedules(now: 200, holder: "A", leaseMicroseconds: 100, limit: 1)
        XCTAssertEqual(byA.map(\.id), [one])
        let byB = try await b.claimDueSchedules(now: 1_000, holder: "B", leaseMicroseconds: 60_000_000, limit: 1)
        XCTAssertEqual(byB.map(\.id), [one], "an expired claim is taken again")

        // A's write comes late: refused, nothing written — while a plain write committed beside
        // it (the same group commit, where the store batches) is not disturbed.
        var write = StoreWrite([set("age", "7")], actor: "api", reason: "scheduled \(one)")
        write.schedule = ScheduleCompletion(id: one, holder: "A", late: false)
        let late = write
        async let refused: [Change] = a.commit(late)
        async let plain: [Change] = a.commit(StoreWrite([set("other", "1")]))
        do {
            _ = try await refused
            XCTFail("a write whose claim was taken over was committed")
        } catch let StoreError.scheduleNotHeld(id) {
            XCTAssertEqual(id, one)
        }
        let beside = try await plain
        XCTAssertEqual(beside.count, 1)
        let afterRefusal = try await a.changes(after: 0, limit: 10)
        XCTAssertEqual(afterRefusal.map(\.kind), [.preference(key: "other", json: "1")], "the refused write left nothing")
        let stillPending = try await b.schedule(id: one)
        XCTAssertEqual(stillPending?.state, .pending)

        // B's write: committed and the schedule applied with its revision, in one step.
        write.schedule = ScheduleCompletion(id: one, holder: "B", late: true)
        let changes = try await b.commit(write)
        XCTAssertEqual(changes.map(\.revision), [2])
        let read = try await a.schedule(id: one)
        let applied = try XCTUnwrap(read)
        XCTAssertEqual(applied.state, .applied)
        XCTAssertEqual(applied.revision, 2)
        XCTAssertEqual(applied.late, true)
        XCTAssertEqual(applied.finishedAt, changes.first?.at)

        // Applied once: no one applies it again, and no claim takes it.
        var again = StoreWrite([set("age", "8")], actor: "api")
        again.schedule = ScheduleCompletion(id: one, holder: "B", late: false)
        do {
            _ = try await b.commit(again)
            XCTFail("an applied schedule was applied again")
        } catch StoreError.scheduleNotHeld {}
        let history = try await a.changes(after: 0, limit: 10)
        XCTAssertEqual(history.count, 2)
        let reclaimed = try await a.claimDueSchedules(now: 100_000_000, holder: "C", leaseMicroseconds: 1_000, limit: 10)
        XCTAssertEqual(Set(reclaimed.map(\.id)), [two, three], "the applied one is not claimed again")

        // A write that changes nothing still records its schedule, at the store's revision.
        var same = StoreWrite([set("age", "7")], actor: "api")
        same.schedule = ScheduleCompletion(id: two, holder: "C", late: false)
        let unchanged = try await a.commit(same)
        XCTAssertEqual(unchanged, [])
        let recorded = try await b.schedule(id: two)
        XCTAssertEqual(recorded?.state, .applied)
        XCTAssertEqual(recorded?.revision, 2)

        // A write refused for its own reason (If-Match) leaves its schedule pending and claimed.
        var conditional = StoreWrite([set("age", "9")], actor: "api")
        conditional.expectedGlobalRevisions = [1]
        conditional.schedule = ScheduleCompletion(id: three, holder: "C", late: false)
        do {
            _ = try await a.commit(conditional)
            XCTFail("If-Match on an old revision was committed")
        } catch StoreError.preconditionFailed {}
        let three_ = try await a.schedule(id: three)
        XCTAssertEqual(three_?.state, .pending)
        guard case .notPending = try await b.cancelSchedule(id: three, now: 100_000_500) else {
            return XCTFail("a claimed schedule was cancelled")
        }
        let final = try await a.changes(after: 0, limit: 10)
        XCTAssertEqual(final.map(\.revision), [1, 2])
    }
}
