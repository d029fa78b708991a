import Foundation
import XCTest
@testable import TidingsStore

final class StoreBasicsTests: XCTestCase {
    /// A read asked after `close()` fails with `.closed` instead of reaching a closed SQLite
    /// handle: it crashed the process (a stream's catch-up read that outlived a server stopped
    /// in-process, `InProcessTidings`).
    func testReadsAfterCloseFailWithClosedInsteadOfCrashing() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        _ = try await store.commit(StoreWrite([.addThing("A")]))
        await store.close()
        do { _ = try await store.loadSnapshot(); XCTFail("a closed store was read") } catch StoreError.closed {}
        do { _ = try await store.changePage(after: 0, limit: 10); XCTFail("a closed store was read") } catch StoreError.closed {}
        do { _ = try await store.state(asOf: .revision(1)); XCTFail("a closed store's history was read") } catch StoreError.closed {}
        do {
            _ = try await store.acquireLease("posts-load", holder: "h", duration: .seconds(1))
            XCTFail("a closed store was written")
        } catch StoreError.closed {}
    }

    func testCreatesDirectoryAndFileInWALModeWithFullSync() throws {
        let dir = makeTemporaryDirectory(self).appendingPathComponent("nested/data")
        let store = try SQLiteStore(directory: dir)
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("tidings.sqlite").path))
        XCTAssertEqual(try store.pragma("journal_mode"), "wal")
        XCTAssertEqual(try store.pragma("synchronous"), "2", "2 = FULL: the WAL is fsynced at every commit")
    }

    func testRevisionsStrictlyIncreaseAcrossCommitsAndReopen() async throws {
        let dir = makeTemporaryDirectory(self)
        var store = try SQLiteStore(directory: dir)
        var seen: [UInt64] = []
        seen += try await store.commit([.setPreference(key: "a", json: "1")])
        seen += try await store.commit([.setPreference(key: "b", json: "2"), .addThing("X")])
        XCTAssertEqual(seen, [1, 2, 3])
        await store.close()

        store = try SQLiteStore(directory: dir)
        XCTAssertEqual(try store.syncSnapshot().revision, 3)
        seen += try await store.commit([.resetPreference(key: "a")])
        seen += try await store.commit([.addThing("Y")])
        XCTAssertEqual(seen, [1, 2, 3, 4, 5])
        await store.close()
    }

    func testSnapshotRoundTripsPreferencesAndThings() async throws {
        let dir = makeTemporaryDirectory(self)
        var store = try SQLiteStore(directory: dir)
        _ = try await store.commit([
            .setPreference(key: "name", json: #""fat \"cat\"\n""#),
            .setPreference(key: "age", json: "5"),
            .setPreference(key: "speed", json: "2.5"),
        ])
        _ = try await store.commit([.setPreference(key: "age", json: "6")])     // 4
        _ = try await store.commit([.resetPreference(key: "speed")])            // 5
        _ = try await store.commit([.addThing("YOLO"), .addThing("BTW"), .addThing("ÄÖÜ")]) // 6...8
        _ = try await store.commit([.removeThing("BTW")])                       // 9
        let expected = StoreSnapshot(
            revision: 9,
            preferences: [
                "name": StoredPreference(json: #""fat \"cat\"\n""#, revision: 1),
                "age": StoredPreference(json: "6", revision: 4),
                "speed": StoredPreference(json: nil, revision: 5),
            ],
            things: ["YOLO", "ÄÖÜ"], thingsRevision: 9)
        XCTAssertEqual(try store.syncSnapshot(), expected)
        await store.close()

        store = try SQLiteStore(directory: dir)
        XCTAssertEqual(try store.syncSnapshot(), expected)
        await store.close()
    }

    func testThingsOrderIsInsertionOrderAndReplaceIsAtomic() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        for thing in ["C", "A", "B", "Z", "M"] { _ = try await store.commit([.addThing(thing)]) }
        _ = try await store.commit([.removeThing("A")])
        _ = try await store.commit([.addThing("A")])
        XCTAssertEqual(try store.syncSnapshot().things, ["C", "B", "Z", "M", "A"])

        let revisions = try await store.commit([.replaceThings(["Q", "W", "E"])])
        XCTAssertEqual(revisions, [8])
        XCTAssertEqual(try store.syncSnapshot().things, ["Q", "W", "E"])
        XCTAssertEqual(try store.syncSnapshot().thingsRevision, 8)

        // A replacement that repeats an entry fails whole: the old list and revision stay.
        do {
            _ = try await store.commit([.replaceThings(["R", "T", "R"])])
            XCTFail("duplicate entries must fail")
        } catch let error as StoreError {
            XCTAssertEqual(error, .duplicateThing("R"))
        }
        let after = try await store.loadSnapshot()
        XCTAssertEqual(after.things, ["Q", "W", "E"])
        XCTAssertEqual(after.revision, 8)
        let cleared = try await store.commit([.replaceThings([])])
        XCTAssertEqual(cleared, [9])
        XCTAssertEqual(try store.syncSnapshot().things, [])
        await store.close()
    }

    func testInvalidOperationsFailTheirCommitAndLeaveNoTrace() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        _ = try await store.commit([.addThing("A")])
        let cases: [([StoreOperation], StoreError)] = [
            ([.setPreference(key: "x", json: "1"), .addThing("A")], .duplicateThing("A")),
            ([.removeThing("B")], .thingNotFound("B")),
            ([.setPreference(key: "x", json: "{not json")], .invalidJSON(key: "x")),
            ([.addThing("B"), .addThing("B")], .duplicateThing("B")),
        ]
        for (operations, expected) in cases {
            do {
                _ = try await store.commit(operations)
                XCTFail("\(operations) must fail")
            } catch let error as StoreError {
                XCTAssertEqual(error, expected)
            }
        }
        XCTAssertEqual(try store.syncSnapshot(), StoreSnapshot(revision: 1, preferences: [:], things: ["A"], thingsRevision: 1))
        let next = try await store.commit([.addThing("B")])
        XCTAssertEqual(next, [2], "failed commits consume no revision")
        await store.close()
    }
}

extension StoreBasicsTests {
    /// The posts document is stored like any other state, and storing the same text is no change.
    func testPostsDocumentTakesARevisionOnlyWhenItChanges() async throws {
        let directory = makeTemporaryDirectory(self)
        do {
            let store = try SQLiteStore(directory: directory)
            let first = try await store.commit([.addThing("YOLO")])
            let stored = try await store.commit([.setPosts(#"{"state":"loaded"}"#)])
            XCTAssertEqual(stored, [first[0] + 1])
            let again = try await store.commit([.setPosts(#"{"state":"loaded"}"#)])
            XCTAssertEqual(again, [], "the same document again is no change")
            await store.close()
        }
        let reopened = try SQLiteStore(directory: directory)
        let snapshot = try await reopened.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 2)
        XCTAssertEqual(snapshot.things, ["YOLO"])
        XCTAssertEqual(snapshot.thingsRevision, 1)
        XCTAssertEqual(snapshot.posts, StoredPosts(document: #"{"state":"loaded"}"#, revision: 2))
        let changes = try await reopened.changes(after: 1, limit: 10)
        XCTAssertEqual(changes.map(\.event), [Change(revision: 2, kind: .posts(#"{"state":"loaded"}"#))])
        await reopened.close()
    }
}
