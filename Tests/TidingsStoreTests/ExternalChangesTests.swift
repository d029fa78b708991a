import Foundation
import XCTest
@testable import TidingsStore

/// Two store instances on one file stand in for two server processes sharing a database.
final class ExternalChangesTests: XCTestCase {
    /// Collects what a watcher delivers (handler runs on the store's writer queue).
    final class Inbox: @unchecked Sendable {
        private let lock = NSLock()
        private var received: [ExternalChange] = []
        func append(_ change: ExternalChange) { lock.lock(); received.append(change); lock.unlock() }
        var all: [ExternalChange] { lock.lock(); defer { lock.unlock() }; return received }
        var changes: [StoredChange] {
            all.flatMap { if case let .changes(list) = $0 { return list } else { return [] } }
        }
    }

    func testChangesAfterReturnsTheLogInOrder() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        _ = try await store.commit([.setPreference(key: "a", json: "1"), .addThing("X")])
        _ = try await store.commit([.resetPreference(key: "a"), .replaceThings(["Y", "Z"]), .removeThing("Y")])
        XCTAssertEqual(try store.changes(after: 1), [
            StoredChange(revision: 2, operation: .addThing("X"), isLocal: true),
            StoredChange(revision: 3, operation: .resetPreference(key: "a"), isLocal: true),
            StoredChange(revision: 4, operation: .replaceThings(["Y", "Z"]), isLocal: true),
            StoredChange(revision: 5, operation: .removeThing("Y"), isLocal: true),
        ])
        XCTAssertEqual(try store.changes(after: 5), [])
        await store.close()
    }

    func testPrunedLogAsksForASnapshot() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self), changeRetention: 3)
        for n in 1...10 { _ = try await store.commit([.setPreference(key: "k", json: "\(n)")]) }
        XCTAssertEqual(try store.changes(after: 7).map(\.revision), [8, 9, 10])
        XCTAssertThrowsError(try store.changes(after: 6)) { error in
            XCTAssertEqual(error as? StoreError, .changesPruned(oldestAvailable: 8))
        }
        await store.close()
    }

    func testAnotherInstancesWritesReachTheWatcherInOrder() async throws {
        let dir = makeTemporaryDirectory(self)
        let watched = try SQLiteStore(directory: dir)
        let other = try SQLiteStore(directory: dir)
        let inbox = Inbox()
        watched.watchExternalChanges(every: .milliseconds(10)) { inbox.append($0) }

        _ = try await other.commit([.setPreference(key: "name", json: "\"cat\"")])
        _ = try await other.commit([.addThing("A"), .addThing("B")])
        await waitUntil("3 external changes") { inbox.changes.count == 3 }
        XCTAssertEqual(inbox.changes, [
            StoredChange(revision: 1, operation: .setPreference(key: "name", json: "\"cat\""), isLocal: false),
            StoredChange(revision: 2, operation: .addThing("A"), isLocal: false),
            StoredChange(revision: 3, operation: .addThing("B"), isLocal: false),
        ])

        // Local commits share the counter and are never echoed back as external.
        let local = try await watched.commit([.addThing("C")])
        XCTAssertEqual(local, [4])
        _ = try await other.commit([.removeThing("A")])
        await waitUntil("the removal") { inbox.changes.count == 4 }
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(inbox.changes.map(\.revision), [1, 2, 3, 5])
        XCTAssertTrue(inbox.changes.allSatisfy { !$0.isLocal })
        XCTAssertEqual(try watched.loadSnapshot().things, ["B", "C"])
        await other.close()
        await watched.close()
    }

    func testAWatcherStartedAfterASnapshotDeliversExactlyTheChangesTheSnapshotMissed() async throws {
        let dir = makeTemporaryDirectory(self)
        let watched = try SQLiteStore(directory: dir)
        let other = try SQLiteStore(directory: dir)
        _ = try await other.commit([.addThing("IN-SNAPSHOT")])
        XCTAssertEqual(try watched.loadSnapshot().things, ["IN-SNAPSHOT"])
        _ = try await other.commit([.addThing("AFTER-SNAPSHOT")])
        let inbox = Inbox()
        watched.watchExternalChanges(every: .milliseconds(10)) { inbox.append($0) }
        await waitUntil("the change after the snapshot") { !inbox.changes.isEmpty }
        _ = try await other.commit([.addThing("LATER")])
        await waitUntil("the later change") { inbox.changes.count >= 2 }
        XCTAssertEqual(inbox.changes.map(\.operation), [.addThing("AFTER-SNAPSHOT"), .addThing("LATER")])
        await other.close()
        await watched.close()
    }

    func testALocalCommitDeliversEarlierExternalChangesBeforeItIsAcknowledged() async throws {
        let dir = makeTemporaryDirectory(self)
        let watched = try SQLiteStore(directory: dir)
        let other = try SQLiteStore(directory: dir)
        let inbox = Inbox()
        // A long interval: only the local commit can notice the external write in time.
        watched.watchExternalChanges(every: .seconds(3600)) { inbox.append($0) }
        _ = try await other.commit([.setPreference(key: "a", json: "1")])
        let revisions = try await watched.commit([.setPreference(key: "b", json: "2")])
        XCTAssertEqual(revisions, [2])
        XCTAssertEqual(inbox.changes.map(\.revision), [1], "delivered before the later commit returned")
        await other.close()
        await watched.close()
    }

    func testFallingBehindAPrunedLogDeliversASnapshot() async throws {
        let dir = makeTemporaryDirectory(self)
        let watched = try SQLiteStore(directory: dir, changeRetention: 2)
        let other = try SQLiteStore(directory: dir, changeRetention: 2)
        let inbox = Inbox()
        watched.watchExternalChanges(every: .seconds(3600)) { inbox.append($0) }
        for n in 1...5 { _ = try await other.commit([.setPreference(key: "k", json: "\(n)")]) }
        _ = try await watched.commit([.addThing("LOCAL")])
        XCTAssertEqual(inbox.all, [.reload(StoreSnapshot(
            revision: 5, preferences: ["k": StoredPreference(json: "5", revision: 5)], things: [], thingsRevision: 0))])
        await other.close()
        await watched.close()
    }
}
