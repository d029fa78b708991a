import Foundation
import XCTest
@testable import TidingsStore

/// ``ChangeStore/commit(_:meanings:interpret:)``: a writer's own changes come back with the
/// meaning it gave each operation, so it never reads (decodes) its own write back.
final class TypedCommitTests: XCTestCase {
    func testEachChangeCarriesTheMeaningOfTheOperationThatMadeIt() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        _ = try await store.commit([.setPreference(key: "b", json: "2")])
        // b is already 2 (no change, no revision): the meanings after it must not shift.
        let write = StoreWrite([.setPreference(key: "a", json: "1"), .setPreference(key: "b", json: "2"),
                                .resetPreference(key: "c"), .setPreference(key: "d", json: "\"x\""),
                                .addThing("X"), .removeThing("X")])
        var interpreted: [UInt64] = []
        let changes = try await store.commit(write, meanings: ["a=1", "b=2", "c reset", "d=x", "+X", "-X"]) { change in
            interpreted.append(change.revision)
            return "interpreted"
        }
        XCTAssertEqual(changes.map(\.meaning), ["a=1", "d=x", "+X", "-X"], "c was never set: its reset changes nothing")
        XCTAssertEqual(changes.map(\.revision), [2, 3, 4, 5])
        XCTAssertEqual(changes.map(\.change.revision), changes.map(\.revision))
        XCTAssertEqual(interpreted, [], "every change is one of the write's own")
        await store.close()
    }

    func testAChangeNoOperationAccountsForIsInterpreted() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        // Fewer meanings than operations (a caller that cannot type some, e.g. a rollback).
        let changes = try await store.commit(StoreWrite([.setPreference(key: "a", json: "1"), .addThing("Y")]),
                                             meanings: ["a=1"]) { change in "read back \(change.revision)" }
        XCTAssertEqual(changes.map(\.meaning), ["a=1", "read back 2"])
        await store.close()
    }
}
