import Foundation
import XCTest
@testable import TidingsStore
import TestFixtures

/// One PostgresStore: what a commit stores, what it answers, what the change table holds.
final class PostgresStoreBasicsTests: PostgresTestCase {
    func testCommitSnapshotAndChangesRoundTrip() async throws {
        let store = try await makeStore(try makeDatabase())
        let empty = try await store.loadSnapshot()
        XCTAssertEqual(empty, StoreSnapshot(revision: 0, preferences: [:], things: [], thingsRevision: 0, identity: empty.identity))
        XCTAssertNotNil(empty.identity)

        var committed: [Change] = []
        committed += try await store.commit(StoreWrite([set("theme", #""dark""#), set("size", "12", default: "10")]))
        committed += try await store.commit(StoreWrite([.addThing("A"), .addThing("Ünïcødé ✓")]))
        committed += try await store.commit(StoreWrite([.removeThing("A")]))
        committed += try await store.commit(StoreWrite([.replaceThings(["X", "Y", "Z"])]))
        committed += try await store.commit(StoreWrite([set("theme", nil)]))
        committed += try await store.commit(StoreWrite([.setPosts(#"{"posts":[]}"#)]))

        XCTAssertEqual(committed.map(\.revision), Array(1...8))
        XCTAssertEqual(committed.map(\.kind), [
            .preference(key: "theme", json: #""dark""#),
            .preference(key: "size", json: "12"),
            .things(op: .add, thing: "A", list: ["A"]),
            .things(op: .add, thing: "Ünïcødé ✓", list: ["A", "Ünïcødé ✓"]),
            .things(op: .remove, thing: "A", list: ["Ünïcødé ✓"]),
            .things(op: .replace, thing: nil, list: ["X", "Y", "Z"]),
            .preference(key: "theme", json: nil),
            .posts(#"{"posts":[]}"#),
        ])

        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 8)
        XCTAssertEqual(snapshot.preferences, [
            "theme": StoredPreference(json: nil, revision: 7),
            "size": StoredPreference(json: "12", revision: 2),
        ])
        XCTAssertEqual(snapshot.things, ["X", "Y", "Z"])
        XCTAssertEqual(snapshot.thingsRevision, 6)
        XCTAssertEqual(snapshot.posts, StoredPosts(document: #"{"posts":[]}"#, revision: 8))

        // The change table replays exactly what the commits answered.
        let history = try await store.changes(after: 0, limit: 100)
        XCTAssertEqual(history, committed)
        let tail = try await store.changes(after: 5, limit: 2)
        XCTAssertEqual(tail, Array(committed[5..<7]))
        let none = try await store.changes(after: 8, limit: 10)
        XCTAssertEqual(none, [])
        let recent = try await store.recentChanges(maxCount: 3, maxBytes: 1 << 20)
        XCTAssertEqual(recent, Array(committed.suffix(3)))
        let byBytes = try await store.recentChanges(maxCount: 100, maxBytes: committed.last!.byteCount)
        XCTAssertEqual(byBytes, [committed.last!])
    }

    func testWritesThatChangeNothingTakeNoRevision() async throws {
        let store = try await makeStore(try makeDatabase())
        // The default, never stored: no change.
        var answer = try await store.commit(StoreWrite([set("size", "10", default: "10")]))
        XCTAssertEqual(answer, [])
        answer = try await store.commit(StoreWrite([set("size", nil, default: "10")]))
        XCTAssertEqual(answer, [])

        answer = try await store.commit(StoreWrite([set("size", "11", default: "10")]))
        XCTAssertEqual(answer.map(\.revision), [1])
        answer = try await store.commit(StoreWrite([set("size", "11", default: "10")]))
        XCTAssertEqual(answer, [], "the same value again")

        answer = try await store.commit(StoreWrite([.replaceThings(["a", "b"])]))
        XCTAssertEqual(answer.map(\.revision), [2])
        answer = try await store.commit(StoreWrite([.replaceThings(["a", "b"])]))
        XCTAssertEqual(answer, [], "the same list again")
        answer = try await store.commit(StoreWrite([.replaceThings(["b", "a"])]))
        XCTAssertEqual(answer.map(\.revision), [3], "another order is a change")

        answer = try await store.commit(StoreWrite([.setPosts("[1]")]))
        XCTAssertEqual(answer.map(\.revision), [4])
        answer = try await store.commit(StoreWrite([.setPosts("[1]")]))
        XCTAssertEqual(answer, [], "the same document again")

        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 4)
        let history = try await store.changes(after: 0, limit: 100)
        XCTAssertEqual(history.map(\.revision), [1, 2, 3, 4])
    }

    func testConditionsAreDecidedInTheTransaction() async throws {
        let store = try await makeStore(try makeDatabase())
        _ = try await store.commit(StoreWrite([.addThing("A"), set("k", "1")]))  // revisions 1, 2

        var error = await storeError { try await store.commit(StoreWrite([.addThing("A")])) }
        XCTAssertEqual(error, .duplicateThing("A"))
        error = await storeError { try await store.commit(StoreWrite([.removeThing("B")])) }
        XCTAssertEqual(error, .thingNotFound("B"))
        error = await storeError { try await store.commit(StoreWrite([.replaceThings(["X", "Y", "X"])])) }
        XCTAssertEqual(error, .duplicateThing("X"))

        // If-Match against the durable revision (0 when never set).
        error = await storeError { try await store.commit(StoreWrite([set("k", "2")], expectedRevisions: ["k": [1]])) }
        XCTAssertEqual(error, .preconditionFailed(key: "k", current: 2))
        error = await storeError { try await store.commit(StoreWrite([set("new", "2")], expectedRevisions: ["new": [5]])) }
        XCTAssertEqual(error, .preconditionFailed(key: "new", current: 0))
        error = await storeError { try await store.commit(StoreWrite([set("k", "2")], expectedRevisions: ["k": []])) }
        XCTAssertEqual(error, .preconditionFailed(key: "k", current: 2), "an empty set never matches")
        error = await storeError { try await store.commit(StoreWrite([set("k", "2")], expectedRevisions: ["k": [UInt64.max]])) }
        XCTAssertEqual(error, .preconditionFailed(key: "k", current: 2), "a revision beyond bigint never matches")
        let matched = try await store.commit(StoreWrite([set("k", "2")], expectedRevisions: ["k": [7, 2]]))
        XCTAssertEqual(matched.map(\.event), [Change(revision: 3, kind: .preference(key: "k", json: "2"))])
        let fresh = try await store.commit(StoreWrite([set("other", "1")], expectedRevisions: ["other": [0]]))
        XCTAssertEqual(fresh.map(\.revision), [4])

        // A write failing half-way leaves nothing behind and takes no revision.
        error = await storeError { try await store.commit(StoreWrite([set("k", "99"), .addThing("C"), .addThing("A")])) }
        XCTAssertEqual(error, .duplicateThing("A"))
        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 4)
        XCTAssertEqual(snapshot.things, ["A"])
        XCTAssertEqual(snapshot.preferences["k"], StoredPreference(json: "2", revision: 3))
        let next = try await store.commit(StoreWrite([.addThing("C")]))
        XCTAssertEqual(next.map(\.event), [Change(revision: 5, kind: .things(op: .add, thing: "C", list: ["A", "C"]))])
    }

    func testOneFailingWriteInABatchFailsAlone() async throws {
        let store = try await makeStore(try makeDatabase())
        _ = try await store.commit(StoreWrite([.addThing("taken")]))
        // Many concurrent writes share transactions; the failing ones must not cost the others.
        let results = await withTaskGroup(of: (Int, StoreError?).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let write = index % 4 == 0
                        ? StoreWrite([set("p\(index)", "1"), .addThing("taken")])
                        : StoreWrite([set("p\(index)", "1"), .addThing("t\(index)")])
                    return (index, await storeError { try await store.commit(write) })
                }
            }
            var results: [Int: StoreError?] = [:]
            for await (index, error) in group { results[index] = error }
            return results
        }
        for (index, error) in results {
            XCTAssertEqual(error, index % 4 == 0 ? .duplicateThing("taken") : nil, "write \(index)")
        }
        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 1 + 150 * 2)
        XCTAssertEqual(snapshot.things.count, 151)
        XCTAssertEqual(snapshot.preferences.count, 150)
        XCTAssertNil(snapshot.preferences["p0"])
        let history = try await store.changes(after: 0, limit: 1000)
        XCTAssertEqual(history.map(\.revision), Array(1...301))
    }

    func testPruningByCountAndByBytes() async throws {
        let url = try makeDatabase()
        let byCount = try await makeStore(url, limits: ChangeStoreLimits(historyCount: 5, historyBytes: 1 << 20))
        for value in 1...10 { _ = try await byCount.commit(StoreWrite([set("k", "\(value)")])) }
        var error = await storeError { try await byCount.changes(after: 0, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 6))
        error = await storeError { try await byCount.changes(after: 4, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 6))
        var kept = try await byCount.changes(after: 5, limit: 100)
        XCTAssertEqual(kept.map(\.revision), [6, 7, 8, 9, 10])
        kept = try await byCount.recentChanges(maxCount: 100, maxBytes: 1 << 20)
        XCTAssertEqual(kept.map(\.revision), [6, 7, 8, 9, 10])

        // Bytes: each change of key "k" with a 3-byte value costs 32 + 1 + 3 = 36, and 3 more
        // for the value it replaced (all but the first).
        let bytesURL = try makeDatabase()
        let byBytes = try await makeStore(bytesURL, limits: ChangeStoreLimits(historyCount: 1000, historyBytes: 36 * 3 + 10))
        for value in 100...107 { _ = try await byBytes.commit(StoreWrite([set("k", "\(value)")])) }
        kept = try await byBytes.changes(after: 5, limit: 100)
        XCTAssertEqual(kept.map(\.revision), [6, 7, 8])
        XCTAssertEqual(kept.map(\.byteCount), [39, 39, 39], "32 + key + value + the value it replaced")
        error = await storeError { try await byBytes.changes(after: 4, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 6))
        // A change bigger than the whole budget is not kept either.
        _ = try await byBytes.commit(StoreWrite([.setPosts(String(repeating: "x", count: 500))]))
        error = await storeError { try await byBytes.changes(after: 8, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 10))
        let nothing = try await byBytes.changes(after: 9, limit: 100)
        XCTAssertEqual(nothing, [])
        let running = try cluster().psql("SELECT history_bytes FROM meta", database: String(bytesURL.split(separator: "/").last!))
        XCTAssertEqual(running.trimmingCharacters(in: .whitespacesAndNewlines), "0")
    }

    func testTextPostgreSQLCannotHoldIsRefusedAlone() async throws {
        let store = try await makeStore(try makeDatabase())
        let error = await storeError { try await store.commit(StoreWrite([.addThing("a\u{0}b")])) }
        guard case .database = error else { return XCTFail("expected .database, got \(String(describing: error))") }
        let answer = try await store.commit(StoreWrite([.addThing("ok")]))
        XCTAssertEqual(answer.map(\.revision), [1])
    }

    func testClosedStoreRefusesCommits() async throws {
        let store = try await makeStore(try makeDatabase())
        await store.close()
        let error = await storeError { try await store.commit(StoreWrite([set("k", "1")])) }
        XCTAssertEqual(error, .closed)
    }
}
