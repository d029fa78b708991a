import Foundation
import XCTest
@testable import TidingsStore

/// The change table as the one ordered history: conditions decided inside the transaction,
/// other processes' commits visible through the doorbell, pruning by count and by bytes.
final class ChangeHistoryTests: XCTestCase {
    func testChangesCarryWhatAnEventNeeds() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        _ = try await store.commit([.setPreference(key: "a", json: "1"), .addThing("X")])
        _ = try await store.commit([.resetPreference(key: "a"), .replaceThings(["Y", "Z"]), .removeThing("Y")])
        let changes = try await store.changes(after: 1, limit: 100)
        XCTAssertEqual(changes.map(\.event), [
            Change(revision: 2, kind: .things(op: .add, thing: "X", list: ["X"])),
            Change(revision: 3, kind: .preference(key: "a", json: nil)),
            Change(revision: 4, kind: .things(op: .replace, thing: nil, list: ["Y", "Z"])),
            Change(revision: 5, kind: .things(op: .remove, thing: "Y", list: ["Z"])),
        ])
        let page = try await store.changes(after: 0, limit: 2)
        XCTAssertEqual(page.map(\.revision), [1, 2])
        await store.close()
    }

    func testIfMatchIsDecidedAgainstTheStoredRevision() async throws {
        let dir = makeTemporaryDirectory(self)
        let first = try SQLiteStore(directory: dir)
        let second = try SQLiteStore(directory: dir)
        _ = try await first.commit([.setPreference(key: "age", json: "6")])  // revision 1
        // Both name revision 1; each process is its own connection.
        let writes = [(first, "7"), (second, "8")]
        let results = await withTaskGroup(of: Result<[Change], any Error>.self) { group in
            for (store, value) in writes {
                group.addTask {
                    do {
                        return .success(try await store.commit(StoreWrite([.setPreference(key: "age", json: value, defaultJSON: "5")],
                                                                          expectedRevisions: ["age": [1]])))
                    } catch { return .failure(error) }
                }
            }
            var all: [Result<[Change], any Error>] = []
            for await result in group { all.append(result) }
            return all
        }
        let successes = results.filter { if case .success = $0 { true } else { false } }
        XCTAssertEqual(successes.count, 1, "exactly one of two writes naming revision 1 succeeds")
        let failures = results.compactMap { result -> StoreError? in
            if case let .failure(error) = result { return error as? StoreError } else { return nil }
        }
        XCTAssertEqual(failures, [.preconditionFailed(key: "age", current: 2)])
        await first.close()
        await second.close()
    }

    func testAThingAddedTwiceThroughTwoProcessesIsStoredOnce() async throws {
        let dir = makeTemporaryDirectory(self)
        let first = try SQLiteStore(directory: dir)
        let second = try SQLiteStore(directory: dir)
        async let a: [UInt64]? = try? first.commit([.addThing("YOLO")])
        async let b: [UInt64]? = try? second.commit([.addThing("YOLO")])
        let outcomes = await [a, b]
        XCTAssertEqual(outcomes.compactMap { $0 }.count, 1)
        do {
            _ = try await first.commit([.removeThing("NOPE")])
            XCTFail("removing a missing thing must fail")
        } catch let error as StoreError {
            XCTAssertEqual(error, .thingNotFound("NOPE"))
        }
        let snapshot = try await second.loadSnapshot()
        XCTAssertEqual(snapshot.things, ["YOLO"])
        XCTAssertEqual(snapshot.revision, 1)
        await first.close()
        await second.close()
    }

    func testTheDoorbellRingsForAnotherProcessesCommit() async throws {
        let dir = makeTemporaryDirectory(self)
        let watched = try SQLiteStore(directory: dir, pollInterval: .milliseconds(10))
        let other = try SQLiteStore(directory: dir)
        let rang = expectation(description: "doorbell")
        rang.assertForOverFulfill = false
        watched.watch { rang.fulfill() }
        // The first poll takes the baseline; commit after it.
        try await Task.sleep(for: .milliseconds(50))
        _ = try await other.commit([.setPreference(key: "name", json: "\"cat\"")])
        await fulfillment(of: [rang], timeout: 5)
        let changes = try await watched.changes(after: 0, limit: 10)
        XCTAssertEqual(changes.map(\.event), [Change(revision: 1, kind: .preference(key: "name", json: "\"cat\""))])
        await watched.close()
        await other.close()
    }

    func testHistoryIsPrunedByCountAndReadersAreToldWhenTheyFellBehind() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self), changeRetention: 3)
        for n in 1...10 { _ = try await store.commit([.setPreference(key: "k", json: "\(n)")]) }
        let recent = try await store.recentChanges(maxCount: 100, maxBytes: 1 << 20)
        XCTAssertEqual(recent.map(\.revision), [8, 9, 10])
        do {
            _ = try await store.changes(after: 2, limit: 10)
            XCTFail("revision 3 was pruned")
        } catch let error as StoreError {
            XCTAssertEqual(error, .changesPruned(oldestAvailable: 8))
        }
        let tail = try await store.changes(after: 7, limit: 10)
        XCTAssertEqual(tail.map(\.revision), [8, 9, 10])
        await store.close()
    }

    func testHistoryIsBoundedByBytes() async throws {
        // Each row holds the value it set and the one it replaced: about 60 kB.
        let limits = ChangeStoreLimits(historyCount: 10_000, historyBytes: 190_000)
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self), limits: limits)
        for n in 1...10 {
            let big = "\"\(n)" + String(repeating: "x", count: 30_000) + "\""
            _ = try await store.commit([.setPreference(key: "k", json: big)])
        }
        let recent = try await store.recentChanges(maxCount: 10_000, maxBytes: 1 << 30)
        let bytes = recent.reduce(0) { $0 + $1.byteCount }
        XCTAssertLessThanOrEqual(bytes, 190_000)
        XCTAssertEqual(recent.map(\.revision), [8, 9, 10], "three 60 kB rows fit in 190 kB")
        await store.close()
    }

    func testSeveralProcessesOpeningAnEmptyDirectoryAtOnceAllSucceed() async throws {
        for _ in 0..<5 {
            let dir = makeTemporaryDirectory(self)
            let stores = try await withThrowingTaskGroup(of: SQLiteStore.self) { group in
                for _ in 0..<4 { group.addTask { try SQLiteStore(directory: dir) } }
                var all: [SQLiteStore] = []
                for try await store in group { all.append(store) }
                return all
            }
            XCTAssertEqual(stores.count, 4)
            for store in stores { await store.close() }
        }
    }

    func testALeaseHasOneHolderUntilItExpires() async throws {
        let dir = makeTemporaryDirectory(self)
        let first = try SQLiteStore(directory: dir)
        let second = try SQLiteStore(directory: dir)
        let a = try await first.acquireLease("posts-fetch", holder: "a", duration: .milliseconds(300))
        let b = try await second.acquireLease("posts-fetch", holder: "b", duration: .milliseconds(300))
        XCTAssertEqual([a, b], [true, false])
        let renewed = try await first.acquireLease("posts-fetch", holder: "a", duration: .milliseconds(300))
        XCTAssertTrue(renewed, "the holder renews")
        try await Task.sleep(for: .milliseconds(400))
        let takeover = try await second.acquireLease("posts-fetch", holder: "b", duration: .seconds(10))
        XCTAssertTrue(takeover, "an expired lease goes to the next taker")
        await first.close()
        await second.close()
    }
}
