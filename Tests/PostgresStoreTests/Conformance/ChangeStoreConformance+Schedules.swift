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

/// Deleting an environment cancels its pending schedules in the delete's own commit — claimed
/// ones too — on every instance of the store, and leaves every other environment's alone; one
/// created again under the same name does not bring them back.
extension ChangeStoreConformance {
    static func deletingAnEnvironmentCancelsItsPendingSchedules(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let openedA = try await maker.open(database, limits: ChangeStoreLimits())
        let openedB = try await maker.open(database, limits: ChangeStoreLimits())
        let a = try XCTUnwrap(openedA as? any ChangeStore & ScheduleStore)
        let b = try XCTUnwrap(openedB as? any ChangeStore & ScheduleStore)
        func create(_ name: String) -> StoreWrite { StoreWrite([.createEnvironment(copiedFrom: nil, limit: 64)], environment: name) }
        let delete = StoreWrite([.deleteEnvironment], environment: "staging")

        // Before any schedule was ever made on this database: deleting still works.
        _ = try await a.commit(create("staging"))
        _ = try await b.commit(delete)

        _ = try await a.commit(create("staging"))
        let (claimed, later, kept, applied) = ("00000000000000a1", "00000000000000a2", "00000000000000a3", "00000000000000a4")
        for (id, environment, at) in [(claimed, "staging", 100), (later, "staging", 5_000_000_000), (kept, "default", 5_000_000_000),
                                      (applied, "staging", 100)] as [(String, String, Int64)] {
            try await a.createSchedule(StoredSchedule(id: id, environment: environment, at: at, body: "{}", createdBy: "api", createdAt: 0),
                                       limits: ScheduleLimits())
        }
        let due = try await a.claimDueSchedules(now: 200, holder: "A", leaseMicroseconds: 60_000_000, limit: 10)
        XCTAssertEqual(Set(due.map(\.id)), [claimed, applied])
        var write = StoreWrite([set("age", "3")], actor: "api", environment: "staging")
        write.schedule = ScheduleCompletion(id: applied, holder: "A", late: false)
        _ = try await a.commit(write)

        // B deletes staging while A holds the claim on one of its schedules.
        let deleted = try await b.commit(delete)
        let deletedAt = try XCTUnwrap(deleted.first?.at)
        for id in [claimed, later] {
            let read = try await a.schedule(id: id)
            XCTAssertEqual(read?.state, .cancelled, id)
            XCTAssertEqual(read?.finishedAt, deletedAt, "cancelled by the delete's own commit: \(id)")
        }
        let appliedRead = try await a.schedule(id: applied)
        XCTAssertEqual(appliedRead?.state, .applied, "a finished schedule stays as it finished")
        let keptRead = try await b.schedule(id: kept)
        XCTAssertEqual(keptRead?.state, .pending, "another environment's schedule is left alone")

        // A's claimed one can no longer be applied, nor finished as failed.
        var late = StoreWrite([set("age", "4")], actor: "api", environment: "staging")
        late.schedule = ScheduleCompletion(id: claimed, holder: "A", late: false)
        do {
            _ = try await a.commit(late)
            XCTFail("a cancelled schedule's write was committed")
        } catch {
            XCTAssertTrue([StoreError.unknownEnvironment("staging"), .scheduleNotHeld(claimed)].contains(error as? StoreError), "\(error)")
        }
        let finished = try await a.finishSchedule(id: claimed, holder: "A", state: .failed, revision: nil, detail: "x", late: false,
                                                  now: 300, limits: ScheduleLimits())
        XCTAssertFalse(finished)

        // Staging again, under the same name: nothing of the old one is pending or claimed.
        _ = try await b.commit(create("staging"))
        let reclaimed = try await b.claimDueSchedules(now: 6_000_000_000, holder: "B", leaseMicroseconds: 1_000, limit: 10)
        XCTAssertEqual(reclaimed.map(\.id), [kept])
        let pending = try await a.schedules(environment: "staging", state: .pending, after: nil, limit: 10)
        XCTAssertEqual(pending, [])
        let next = try await b.nextScheduleTime()
        XCTAssertEqual(next, 5_000_000_000, "only default's schedule is still pending")
        let history = try await a.changes(after: 0, limit: 20)
        XCTAssertFalse(history.contains { $0.environment == "staging" && $0.kind == .preference(key: "age", json: "4") })

        // A schedule made for an environment that is gone is refused, not stored.
        _ = try await a.commit(delete)
        do {
            try await a.createSchedule(StoredSchedule(id: "00000000000000b0", environment: "staging", at: 5_000_000_000, body: "{}",
                                                      createdBy: "api", createdAt: 0), limits: ScheduleLimits())
            XCTFail("a schedule was stored for a deleted environment")
        } catch {
            XCTAssertEqual(error as? ScheduleStoreError, .unknownEnvironment("staging"))
        }

        // Made through one instance while another deletes the environment: either the schedule is
        // refused or the delete cancels it — never pending in an environment that is gone.
        for round in 1...12 {
            let name = "race-\(round)"
            _ = try await a.commit(create(name))
            let id = String(format: "%016x", 0xc0 + round)
            let schedule = StoredSchedule(id: id, environment: name, at: 5_000_000_000, body: "{}", createdBy: "api", createdAt: 0)
            async let made: Void = a.createSchedule(schedule, limits: ScheduleLimits())
            async let gone: [Change] = b.commit(StoreWrite([.deleteEnvironment], environment: name))
            let refused: Bool
            do { try await made; refused = false } catch ScheduleStoreError.unknownEnvironment { refused = true }
            _ = try await gone
            let stored = try await b.schedule(id: id)
            XCTAssertEqual(stored?.state, refused ? nil : .cancelled, "round \(round)")
        }
        let stillPending = try await a.claimDueSchedules(now: 6_000_000_000, holder: "C", leaseMicroseconds: 1_000, limit: 100)
        XCTAssertEqual(stillPending, [], "nothing pending anywhere: default's was claimed by B above")
    }
}
