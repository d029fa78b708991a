import Foundation
import XCTest
@testable import TidingsStore

/// A write's conditions are decided inside its transaction against durable state, and a write
/// that fails writes nothing and costs no other write.
extension ChangeStoreConformance {
    /// `If-Match` on a key (its durable revision, 0 when never set) and on the global revision:
    /// a mismatch is ``StoreError/preconditionFailed(key:current:)`` with nothing written.
    static func ifMatchIsDecidedAgainstDurableRevisions(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        _ = try await store.commit([.addThing("A"), set("k", "1")])  // revisions 1, 2

        var error = await storeError { try await store.commit(StoreWrite([set("k", "2")], expectedRevisions: ["k": [1]])) }
        XCTAssertEqual(error, .preconditionFailed(key: "k", current: 2))
        error = await storeError { try await store.commit(StoreWrite([set("new", "2")], expectedRevisions: ["new": [5]])) }
        XCTAssertEqual(error, .preconditionFailed(key: "new", current: 0), "a key never set is at revision 0")
        error = await storeError { try await store.commit(StoreWrite([set("k", "2")], expectedRevisions: ["k": []])) }
        XCTAssertEqual(error, .preconditionFailed(key: "k", current: 2), "an empty set never matches")
        error = await storeError { try await store.commit(StoreWrite([set("k", "2")], expectedRevisions: ["k": [UInt64.max]])) }
        XCTAssertEqual(error, .preconditionFailed(key: "k", current: 2), "a revision beyond any stored never matches")
        error = await storeError {
            try await store.commit(StoreWrite([.addThing("B"), set("k", "2")], expectedRevisions: ["k": [1]]))
        }
        XCTAssertEqual(error, .preconditionFailed(key: "k", current: 2), "checked before any operation runs")

        let matched = try await store.commit(StoreWrite([set("k", "2")], expectedRevisions: ["k": [7, 2]]))
        XCTAssertEqual(matched.map(\.event), [Change(revision: 3, kind: .preference(key: "k", json: "2"))])
        let fresh = try await store.commit(StoreWrite([set("other", "1")], expectedRevisions: ["other": [0]]))
        XCTAssertEqual(fresh.map(\.revision), [4])

        // The global revision: the one the store is at when the write runs.
        error = await storeError { try await store.commit([set("k", "3")], ifGlobalRevisionIn: [0, 3]) }
        XCTAssertEqual(error, .preconditionFailed(key: "", current: 4))
        error = await storeError { try await store.commit([set("k", "3")], ifGlobalRevisionIn: []) }
        XCTAssertEqual(error, .preconditionFailed(key: "", current: 4), "an empty set never matches")
        let global = try await store.commit([set("k", "3")], ifGlobalRevisionIn: [4])
        XCTAssertEqual(global.map(\.revision), [5])

        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 5, "no failed write took a revision")
        XCTAssertEqual(snapshot.things, ["A"])
        XCTAssertNil(snapshot.preferences["new"])
        let table = try await store.changes(after: 0, limit: 100)
        XCTAssertEqual(table.map(\.revision), Array(1...5))
    }

    /// duplicateThing and thingNotFound, also when an earlier operation of the same write
    /// already changed something: the whole write is undone and takes no revision.
    static func aFailingOperationUndoesItsWholeWrite(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        _ = try await store.commit([.addThing("A"), set("k", "1")])  // revisions 1, 2

        var error = await storeError { try await store.commit([.addThing("A")]) }
        XCTAssertEqual(error, .duplicateThing("A"))
        error = await storeError { try await store.commit([.removeThing("B")]) }
        XCTAssertEqual(error, .thingNotFound("B"))
        error = await storeError { try await store.commit([.replaceThings(["X", "Y", "X"])]) }
        XCTAssertEqual(error, .duplicateThing("X"))

        // Later operations failing after earlier ones changed something.
        error = await storeError { try await store.commit([set("k", "99"), .addThing("C"), .addThing("A")]) }
        XCTAssertEqual(error, .duplicateThing("A"))
        error = await storeError { try await store.commit([.replaceThings(["P", "Q"]), .setPosts("{}"), .removeThing("A")]) }
        XCTAssertEqual(error, .thingNotFound("A"))
        error = await storeError { try await store.commit([.removeThing("A"), .replaceThings(["Z", "Z"])]) }
        XCTAssertEqual(error, .duplicateThing("Z"))

        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.withoutEnvironmentDetails, StoreSnapshot(
            revision: 2, preferences: ["k": StoredPreference(json: "1", revision: 2)], things: ["A"], thingsRevision: 1,
            identity: snapshot.identity))
        let table = try await store.changes(after: 0, limit: 100)
        XCTAssertEqual(table.map(\.revision), [1, 2])
        let next = try await store.commit([.addThing("C")])
        XCTAssertEqual(next.map(\.event), [Change(revision: 3, kind: .things(op: .add, thing: "C", list: ["A", "C"]))])
    }

    /// Concurrent commits share transactions (group commit); one write's failure costs no
    /// other write, and the revisions stay contiguous.
    static func concurrentWritesFailAlone(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        _ = try await store.commit([.addThing("taken")])
        let results = await withTaskGroup(of: (Int, StoreError?, [Change]).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let write: [WriteOperation] = switch index % 4 {
                    case 0: [set("p\(index)", "1"), .addThing("taken")]
                    case 1: [set("p\(index)", "1"), .removeThing("never-\(index)")]
                    default: [set("p\(index)", "1"), .addThing("t\(index)")]
                    }
                    do {
                        return (index, nil, try await store.commit(write))
                    } catch {
                        return (index, error as? StoreError ?? .database("\(error)"), [])
                    }
                }
            }
            var results: [(Int, StoreError?, [Change])] = []
            for await result in group { results.append(result) }
            return results
        }
        var answered: [Change] = []
        for (index, error, changes) in results {
            switch index % 4 {
            case 0: XCTAssertEqual(error, .duplicateThing("taken"), "write \(index)")
            case 1: XCTAssertEqual(error, .thingNotFound("never-\(index)"), "write \(index)")
            default:
                XCTAssertNil(error, "write \(index)")
                XCTAssertEqual(changes.count, 2, "write \(index)")
                XCTAssertEqual(changes.last.map(\.revision), changes.first.map { $0.revision + 1 }, "write \(index): its own two revisions")
            }
            answered += changes
        }
        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 1 + 100 * 2)
        XCTAssertEqual(snapshot.things.count, 101)
        XCTAssertEqual(snapshot.preferences.count, 100)
        XCTAssertNil(snapshot.preferences["p0"])
        XCTAssertNil(snapshot.preferences["p1"])
        let table = try await store.changes(after: 0, limit: 1_000)
        XCTAssertEqual(table.map(\.revision), Array(1...201))
        XCTAssertEqual(Array(table.dropFirst()), answered.sorted { $0.revision < $1.revision }, "each answer is what the table holds")
    }
}
