import Foundation
import XCTest
@testable import TidingsStore
import GRDB

/// Environments in the SQLite store (API.md "Environments"): values, things and history keyed by
/// environment under one global revision counter; creating, deleting (its history rows erased,
/// the table still contiguous); and a database written before environments opens as `default`.
final class EnvironmentStoreTests: XCTestCase {
    private func create(_ name: String, limit: Int = 64, copiedFrom: String? = nil) -> StoreWrite {
        StoreWrite([.createEnvironment(copiedFrom: copiedFrom, limit: limit)], environment: name)
    }

    func testEnvironmentsShareOneCounterAndKeepTheirOwnState() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        let created = try await store.commit(create("staging", copiedFrom: "default"))
        XCTAssertEqual(created.map(\.revision), [1])
        XCTAssertEqual(created.first?.kind, .environment(.created, copiedFrom: "default"))
        XCTAssertEqual(created.first?.environment, "staging")
        let staging = try await store.commit(StoreWrite([.setPreference(key: "age", json: "41"), .addThing("YOLO")], environment: "staging"))
        XCTAssertEqual(staging.map(\.revision), [2, 3])
        XCTAssertEqual(staging.map(\.environment), ["staging", "staging"])
        let main = try await store.commit(StoreWrite([.setPreference(key: "age", json: "7")]))
        XCTAssertEqual(main.map(\.revision), [4])
        XCTAssertEqual(main.first?.before, nil, "default's value is its own, not staging's")

        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 4)
        XCTAssertEqual(snapshot.preferences["age"]?.json, "7")
        XCTAssertEqual(snapshot.things, [])
        let stored = try XCTUnwrap(snapshot.environments["staging"])
        XCTAssertEqual(stored.preferences["age"], StoredPreference(json: "41", revision: 2))
        XCTAssertEqual(stored.things, ["YOLO"])
        XCTAssertEqual(stored.thingsRevision, 3)
        XCTAssertEqual(stored.revision, 3)
        XCTAssertEqual(stored.copiedFrom, "default")

        // History and as-of reads per environment.
        let history = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 10, environment: "staging"))
        XCTAssertEqual(history.map(\.revision), [3, 2])
        let mainHistory = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 10))
        XCTAssertEqual(mainHistory.map(\.revision), [4])
        let past = try await store.state(asOf: .revision(2), environment: "staging")
        XCTAssertEqual(past.preferences["age"]?.json, "41")
        XCTAssertEqual(past.things, [])
        let mainPast = try await store.state(asOf: .revision(3))
        XCTAssertNil(mainPast.preferences["age"])

        // Conditions inside the transaction.
        await assertThrows(StoreError.unknownEnvironment("dev")) {
            _ = try await store.commit(StoreWrite([.setPreference(key: "age", json: "1")], environment: "dev"))
        }
        await assertThrows(StoreError.environmentExists("staging")) { _ = try await store.commit(self.create("staging")) }
        await assertThrows(StoreError.tooManyEnvironments(limit: 2)) { _ = try await store.commit(self.create("dev", limit: 2)) }
        await assertThrows(StoreError.defaultEnvironment) {
            _ = try await store.commit(StoreWrite([.deleteEnvironment]))
        }
        // If-Match is decided against the environment's own revision of the key.
        await assertThrows(StoreError.preconditionFailed(key: "age", current: 2)) {
            _ = try await store.commit(StoreWrite([.setPreference(key: "age", json: "5")], expectedRevisions: ["age": [4]],
                                                  environment: "staging"))
        }
    }

    func testDeletingErasesItsHistoryAndKeepsTheTableContiguous() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        _ = try await store.commit(create("staging"))
        _ = try await store.commit(StoreWrite([.setPreference(key: "a", json: "1")], environment: "staging"))
        _ = try await store.commit(StoreWrite([.setPreference(key: "a", json: "2")]))
        let deleted = try await store.commit(StoreWrite([.deleteEnvironment], environment: "staging"))
        XCTAssertEqual(deleted.map(\.kind), [.environment(.deleted, copiedFrom: nil)])
        XCTAssertEqual(deleted.first?.revision, 4)

        let changes = try await store.changes(after: 0, limit: 10)
        XCTAssertEqual(changes.map(\.revision), [1, 2, 3, 4])
        XCTAssertEqual(changes[0].kind, .environment(.erased, copiedFrom: nil))
        XCTAssertEqual(changes[1].kind, .environment(.erased, copiedFrom: nil))
        XCTAssertEqual(changes[1].environment, "")
        XCTAssertEqual(changes[2].kind, .preference(key: "a", json: "2"))
        let snapshot = try await store.loadSnapshot()
        XCTAssertNil(snapshot.environments["staging"])
        XCTAssertEqual(snapshot.preferences["a"]?.json, "2")
        // The byte total still equals the rows'.
        let (total, sum) = try store.writer.queue.sync {
            try store.writer.database.read { db in
                (try Int.fetchOne(db, sql: "SELECT historyBytes FROM meta") ?? -1,
                 try Int.fetchOne(db, sql: "SELECT SUM(bytes) FROM change") ?? -2)
            }
        }
        XCTAssertEqual(total, sum)
        // Made again: empty, no history.
        _ = try await store.commit(create("staging"))
        let history = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 10, environment: "staging"))
        XCTAssertEqual(history, [])
        let state = try await store.state(asOf: .revision(5), environment: "staging")
        XCTAssertEqual(state.preferences, [:])
    }

    func testRetentionFoldsEachEnvironmentIntoItsOwnBase() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self), limits: ChangeStoreLimits(historyCount: 4))
        _ = try await store.commit(create("staging"))
        for value in 1...5 {
            _ = try await store.commit(StoreWrite([.setPreference(key: "a", json: "\(value)")], environment: "staging"))
            _ = try await store.commit(StoreWrite([.setPreference(key: "a", json: "\(value * 10)")]))
        }
        let oldest = try await store.changes(after: 7, limit: 1).first?.revision
        XCTAssertEqual(oldest, 8)
        // At the floor, each environment reads its own folded state.
        let staging = try await store.state(asOf: .revision(7), environment: "staging")
        XCTAssertEqual(staging.preferences["a"]?.json, "3")
        let main = try await store.state(asOf: .revision(7))
        XCTAssertEqual(main.preferences["a"]?.json, "30")
        await assertThrows(StoreError.beyondHistory(oldestReadable: 7)) {
            _ = try await store.state(asOf: .revision(6), environment: "staging")
        }
    }

    /// A database written by the release before environments (schema v5, rows as it wrote them)
    /// opens, and everything in it is `default`'s.
    func testDatabaseFromBeforeEnvironmentsOpensAsDefault() async throws {
        let directory = makeTemporaryDirectory(self)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent(SQLiteStore.fileName).path
        try Self.writeDatabaseFromBeforeEnvironments(path: path)
        let store = try SQLiteStore(directory: directory)
        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 3)
        XCTAssertEqual(Set(snapshot.environments.keys), ["default"])
        XCTAssertEqual(snapshot.preferences["age"], StoredPreference(json: "7", revision: 1))
        XCTAssertEqual(snapshot.preferences["name"], StoredPreference(json: "\"x\"", revision: 2))
        XCTAssertEqual(snapshot.things, ["YOLO"])
        XCTAssertEqual(snapshot.thingsRevision, 3)
        XCTAssertEqual(snapshot.environments["default"]?.revision, 3)
        let changes = try await store.changes(after: 0, limit: 10)
        XCTAssertEqual(changes.map(\.environment), ["default", "default", "default"])
        XCTAssertEqual(changes.map(\.actor), ["api", "api", "ops"])
        let past = try await store.state(asOf: .revision(2))
        XCTAssertEqual(past.preferences["age"]?.json, "7")
        XCTAssertEqual(past.things, [])
        let latest = try await store.state(asOf: .revision(3))
        XCTAssertEqual(latest.things, ["YOLO"])
        // It goes on: the next revision, in default; and environments can be made.
        let next = try await store.commit(StoreWrite([.setPreference(key: "age", json: "8")]))
        XCTAssertEqual(next.map(\.revision), [4])
        XCTAssertEqual(next.first?.before, "7")
        let staging = try await store.commit(create("staging"))
        XCTAssertEqual(staging.map(\.revision), [5])
    }

    /// Schema v5 and rows as the release before environments wrote them.
    static func writeDatabaseFromBeforeEnvironments(path: String) throws {
            let old = try DatabaseQueue(path: path)
            try Schema.migrator.migrate(old, upTo: "v5")
            try old.write { db in
                try db.execute(sql: """
                    INSERT INTO preference (key, value, revision) VALUES ('age', '7', 1), ('name', '"x"', 2);
                    INSERT INTO thing (text, position) VALUES ('YOLO', 1);
                    INSERT INTO change (revision, kind, op, subject, value, bytes, at, actor, reason, before) VALUES
                        (1, 'preference', NULL, 'age', '7', 40, 1800000000000000, 'api', NULL, NULL),
                        (2, 'preference', NULL, 'name', '"x"', 43, 1800000001000000, 'api', 'why', NULL),
                        (3, 'things', 'add', 'YOLO', '["YOLO"]', 50, 1800000002000000, 'ops', NULL, NULL);
                    INSERT INTO checkpoint (revision, state) VALUES (2, '{"p":{"age":{"v":"7","r":1}},"t":[],"tr":0,"a":1800000001000000}');
                    UPDATE meta SET revision = 3, thingsRevision = 3, historyBytes = 133, lastAt = 1800000002000000;
                    """)
            }
            try old.close()
    }

    private func assertThrows(_ expected: StoreError, file: StaticString = #filePath, line: UInt = #line,
                              _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("expected \(expected)", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? StoreError, expected, file: file, line: line)
        }
    }
}
