import Foundation
import XCTest
@testable import TidingsStore

/// Several instances on one database (processes sharing an SQLite file, servers sharing a
/// PostgreSQL database): one counter, each other's commits, the doorbell, leases; and close.
extension ChangeStoreConformance {
    /// Two instances draw from one counter; each reads the other's commits in
    /// ``ChangeStore/changes(after:limit:)`` and sees them in its snapshot.
    static func instancesShareOneHistory(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let first = try await maker.open(database, limits: ChangeStoreLimits())
        let second = try await maker.open(database, limits: ChangeStoreLimits())
        var committed: [Change] = []
        for round in 0..<4 {
            committed += try await first.commit([set("from-first", "\(round)")], actor: "first")
            committed += try await second.commit([set("from-second", "\(round)"), .addThing("s\(round)")], actor: "second")
        }
        XCTAssertEqual(committed.map(\.revision), Array(1...12))
        for store in [first, second] {
            let table = try await store.changes(after: 0, limit: 100)
            XCTAssertEqual(table, committed, "any writer's changes, in revision order")
            let snapshot = try await store.loadSnapshot()
            XCTAssertEqual(snapshot.revision, 12)
            XCTAssertEqual(snapshot.things, ["s0", "s1", "s2", "s3"])
        }
    }

    /// The doorbell rings in one instance after another instance's commit (a read the ring
    /// started finds the commit).
    static func theDoorbellRingsForAnotherInstancesCommit(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let writer = try await maker.open(database, limits: ChangeStoreLimits())
        let watcher = try await maker.open(database, limits: ChangeStoreLimits())
        let reader = DoorbellReader(watcher)
        // A read through the watcher runs after `watch` took its baseline (SQLite: the same queue).
        _ = try await watcher.loadSnapshot()
        let first = try await writer.commit([set("k", "1")])
        await waitUntil("the watcher's doorbell after revision 1") { reader.seen.contains(1) }
        let second = try await writer.commit([.addThing("A"), .addThing("B")])
        XCTAssertEqual((first + second).map(\.revision), [1, 2, 3])
        await waitUntil("the watcher's doorbell after revision 3") { reader.seen.contains(3) }
    }

    /// After ``ChangeStore/close()`` a commit throws ``StoreError/closed`` and writes nothing;
    /// closing twice is harmless; what was committed before is there on reopening.
    static func aClosedStoreRefusesCommits(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let store = try await maker.open(database, limits: ChangeStoreLimits())
        _ = try await store.commit([set("k", "1")])
        await store.close()
        let error = await storeError { try await store.commit([set("k", "2")]) }
        XCTAssertEqual(error, .closed)
        await store.close()
        let reopened = try await maker.open(database, limits: ChangeStoreLimits())
        let snapshot = try await reopened.loadSnapshot()
        XCTAssertEqual(snapshot.preferences, ["k": StoredPreference(json: "1", revision: 1)])
        XCTAssertEqual(snapshot.revision, 1)
    }

    /// ``ChangeStore/close()`` while commits are in flight: each one either was acknowledged
    /// (and is durable: a reopened store holds it) or throws ``StoreError/closed`` (and wrote
    /// nothing); none is lost or left hanging.
    static func closeAnswersEveryCommitInFlight(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let store = try await maker.open(database, limits: ChangeStoreLimits())
        let outcomes = await withTaskGroup(of: (Int, Result<[Change], StoreError>).self) { group in
            for index in 0..<64 {
                group.addTask {
                    do {
                        return (index, .success(try await store.commit([set("k\(index)", "\(index)")])))
                    } catch {
                        return (index, .failure(error as? StoreError ?? .database("\(error)")))
                    }
                }
            }
            group.addTask {
                await store.close()
                return (-1, .success([]))
            }
            var outcomes: [Int: Result<[Change], StoreError>] = [:]
            for await (index, outcome) in group where index >= 0 { outcomes[index] = outcome }
            return outcomes
        }
        var acknowledged: [String: StoredPreference] = [:]
        for (index, outcome) in outcomes {
            switch outcome {
            case let .success(changes):
                XCTAssertEqual(changes.count, 1, "write \(index)")
                if let change = changes.first { acknowledged["k\(index)"] = StoredPreference(json: "\(index)", revision: change.revision) }
            case let .failure(error): XCTAssertEqual(error, .closed, "write \(index)")
            }
        }
        let reopened = try await maker.open(database, limits: ChangeStoreLimits())
        let snapshot = try await reopened.loadSnapshot()
        XCTAssertEqual(snapshot.preferences, acknowledged, "exactly the acknowledged writes are stored")
        XCTAssertEqual(snapshot.revision, UInt64(acknowledged.count))
    }

    /// A lease has one holder at a time: the holder renews, another holder is refused until it
    /// expires and then takes it; names are separate leases.
    static func aLeaseHasOneHolderUntilItExpires(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let a = try await maker.open(database, limits: ChangeStoreLimits())
        let b = try await maker.open(database, limits: ChangeStoreLimits())
        let lease = Duration.milliseconds(600)
        var held = try await a.acquireLease("posts", holder: "a", duration: lease)
        XCTAssertTrue(held)
        held = try await b.acquireLease("posts", holder: "b", duration: lease)
        XCTAssertFalse(held, "A holds it")
        let renewed = Date()
        held = try await a.acquireLease("posts", holder: "a", duration: lease)
        XCTAssertTrue(held, "A renews")
        held = try await b.acquireLease("other", holder: "b", duration: lease)
        XCTAssertTrue(held, "another name is another lease")
        held = try await b.acquireLease("posts", holder: "b", duration: lease)
        XCTAssertFalse(held, "A's renewal holds")
        await waitUntil("A's lease to expire so B gets it", timeout: 10) {
            (try? await b.acquireLease("posts", holder: "b", duration: .seconds(60))) == true
        }
        let waited = Date().timeIntervalSince(renewed)
        XCTAssertGreaterThanOrEqual(waited, 0.5, "B got it only once A's renewal (600 ms) had run out")
        held = try await a.acquireLease("posts", holder: "a", duration: lease)
        XCTAssertFalse(held, "now B holds it")
        held = try await b.acquireLease("posts", holder: "b", duration: lease)
        XCTAssertTrue(held, "B renews")
    }

    /// A take says what it found: a free lease or the holder's own (`taken`), another holder's
    /// live lease (`refused`), or another holder's lease that expired without being given back
    /// (`takenOver`: that holder died). A lease given back is free, not taken over; the purge of
    /// expired rows that runs with every take (this name's or another's) keeps a just-expired
    /// row, so the take over it is still told apart.
    static func aLeaseTakeSaysWhetherItTookOverAHolderThatNeverGaveItBack(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let a = try await maker.open(database, limits: ChangeStoreLimits())
        let b = try await maker.open(database, limits: ChangeStoreLimits())
        let c = try await maker.open(database, limits: ChangeStoreLimits())
        var take = try await a.takeLease("load", holder: "a", duration: .seconds(60))
        XCTAssertEqual(take, .taken, "no row")
        take = try await a.takeLease("load", holder: "a", duration: .seconds(60))
        XCTAssertEqual(take, .taken, "A renews its own")
        take = try await b.takeLease("load", holder: "b", duration: .seconds(60))
        XCTAssertEqual(take, .refused, "A holds it")
        try await b.releaseLease("load", holder: "b")
        take = try await b.takeLease("load", holder: "b", duration: .seconds(60))
        XCTAssertEqual(take, .refused, "only its holder gives a lease back")
        try await a.releaseLease("load", holder: "a")
        take = try await b.takeLease("load", holder: "b", duration: .seconds(60))
        XCTAssertEqual(take, .taken, "given back: free, not taken over")
        let granted = try await a.acquireLease("load", holder: "a", duration: .seconds(60))
        XCTAssertFalse(granted, "B holds it now")

        // A takes `dead` and never gives it back (killed): once it expired, B takes it over.
        take = try await a.takeLease("dead", holder: "a", duration: .milliseconds(300))
        XCTAssertEqual(take, .taken)
        var found: [LeaseTake] = []
        await waitUntil("A's lease of `dead` to expire so B gets it", timeout: 10) {
            // Another instance's take of another name purges expired rows first.
            _ = try? await c.takeLease("other-\(found.count)", holder: "c", duration: .seconds(60))
            guard let take = try? await b.takeLease("dead", holder: "b", duration: .seconds(60)) else { return false }
            found.append(take)
            return take != .refused
        }
        XCTAssertEqual(found.last, .takenOver, "B replaced the row A never gave back: \(found)")
        XCTAssertEqual(Set(found.dropLast()), found.count > 1 ? [.refused] : [], "\(found)")
        take = try await b.takeLease("dead", holder: "b", duration: .seconds(60))
        XCTAssertEqual(take, .taken, "B renews its own: not a take-over")
        take = try await a.takeLease("dead", holder: "a", duration: .seconds(60))
        XCTAssertEqual(take, .refused, "B holds it")
    }
}
