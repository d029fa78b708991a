import Foundation
import XCTest
@testable import TidingsStore

/// Environments (API.md "Environments"): one global counter, each environment's own values,
/// things, history and as-of reads; creating and deleting as changes every instance reads;
/// a deleted environment's history rows erased in place, so the table stays contiguous.
extension ChangeStoreConformance {
    private static func create(_ name: String, limit: Int = 64, copiedFrom: String? = nil) -> StoreWrite {
        StoreWrite([.createEnvironment(copiedFrom: copiedFrom, limit: limit)], environment: name)
    }

    private static func expect(_ expected: StoreError, _ body: () async throws -> Void,
                               file: StaticString = #filePath, line: UInt = #line) async {
        do {
            try await body()
            XCTFail("expected \(expected)", file: file, line: line)
        } catch {
            XCTAssertEqual(error as? StoreError, expected, file: file, line: line)
        }
    }

    static func environmentsKeepTheirOwnStateUnderOneCounter(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let store = try await maker.open(database, limits: ChangeStoreLimits())
        let other = try await maker.open(database, limits: ChangeStoreLimits())
        let created = try await store.commit(create("staging", copiedFrom: "default"))
        XCTAssertEqual(created.map(\.kind), [.environment(.created, copiedFrom: "default")])
        XCTAssertEqual(created.map(\.environment), ["staging"])
        let staging = try await other.commit(StoreWrite([set("age", "41"), .addThing("YOLO")], actor: "ops", environment: "staging"))
        XCTAssertEqual(staging.map(\.revision), [2, 3])
        XCTAssertEqual(staging.map(\.environment), ["staging", "staging"])
        let main = try await store.commit([set("age", "7")])
        XCTAssertEqual(main.map(\.revision), [4])
        XCTAssertNil(main.first?.before)

        // What every instance reads back: the same changes, the same snapshot.
        let read = try await store.changes(after: 0, limit: 10)
        XCTAssertEqual(read.map(\.environment), ["staging", "staging", "staging", "default"])
        XCTAssertEqual(Array(read[1...2]), staging)
        let snapshot = try await other.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 4)
        XCTAssertEqual(snapshot.preferences["age"]?.json, "7")
        XCTAssertEqual(Set(snapshot.environments.keys), ["default", "staging"])
        let stored = try XCTUnwrap(snapshot.environments["staging"])
        XCTAssertEqual(stored.preferences["age"], StoredPreference(json: "41", revision: 2))
        XCTAssertEqual(stored.things, ["YOLO"])
        XCTAssertEqual(stored.thingsRevision, 3)
        XCTAssertEqual(stored.revision, 3)
        XCTAssertEqual(stored.copiedFrom, "default")
        XCTAssertGreaterThan(stored.createdAt, 0)

        let history = try await other.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 10, environment: "staging"))
        XCTAssertEqual(history.map(\.revision), [3, 2])
        XCTAssertEqual(history.map(\.environment), ["staging", "staging"])
        let mainHistory = try await other.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 10))
        XCTAssertEqual(mainHistory.map(\.revision), [4])
        let past = try await store.state(asOf: .revision(2), environment: "staging")
        XCTAssertEqual(past.preferences["age"]?.json, "41")
        XCTAssertEqual(past.things, [])
        let mainPast = try await store.state(asOf: .revision(3))
        XCTAssertNil(mainPast.preferences["age"])

        await expect(.unknownEnvironment("dev")) {
            _ = try await store.commit(StoreWrite([set("age", "1")], environment: "dev"))
        }
        await expect(.environmentExists("staging")) { _ = try await other.commit(create("staging")) }
        await expect(.tooManyEnvironments(limit: 2)) { _ = try await store.commit(create("dev", limit: 2)) }
        await expect(.defaultEnvironment) { _ = try await store.commit(StoreWrite([.deleteEnvironment])) }
        await expect(.preconditionFailed(key: "age", current: 2)) {
            _ = try await store.commit(StoreWrite([set("age", "5")], expectedRevisions: ["age": [4]], environment: "staging"))
        }
    }

    static func deletingAnEnvironmentErasesItsHistory(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore(limits: ChangeStoreLimits(historyCount: 6))
        _ = try await store.commit(create("staging"))
        _ = try await store.commit(StoreWrite([set("a", "1")], environment: "staging"))
        _ = try await store.commit([set("a", "2")])
        let deleted = try await store.commit(StoreWrite([.deleteEnvironment], environment: "staging"))
        XCTAssertEqual(deleted.map(\.kind), [.environment(.deleted, copiedFrom: nil)])
        XCTAssertEqual(deleted.map(\.revision), [4])
        let changes = try await store.changes(after: 0, limit: 10)
        XCTAssertEqual(changes.map(\.revision), [1, 2, 3, 4])
        XCTAssertEqual(changes[0].kind, .environment(.erased, copiedFrom: nil))
        XCTAssertEqual(changes[1].kind, .environment(.erased, copiedFrom: nil))
        XCTAssertEqual(changes[1].environment, "")
        XCTAssertEqual(changes[2].kind, .preference(key: "a", json: "2"))
        let snapshot = try await store.loadSnapshot()
        XCTAssertNil(snapshot.environments["staging"])
        XCTAssertEqual(snapshot.preferences["a"]?.json, "2")
        _ = try await store.commit(create("staging"))
        let history = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 10, environment: "staging"))
        XCTAssertEqual(history, [])
        let state = try await store.state(asOf: .revision(5), environment: "staging")
        XCTAssertEqual(state.preferences, [:])

        // Retention folds each environment's dropped rows into its own base.
        for value in 1...4 {
            _ = try await store.commit(StoreWrite([set("a", "\(value)")], environment: "staging"))
            _ = try await store.commit([set("a", "\(value * 10)")])
        }
        // Revisions 6...13; six kept (8...13), the floor at 7.
        let oldest = try await store.changes(after: 7, limit: 1).first?.revision
        XCTAssertEqual(oldest, 8)
        let atFloor = try await store.state(asOf: .revision(7), environment: "staging")
        XCTAssertEqual(atFloor.preferences["a"]?.json, "1")
        let mainAtFloor = try await store.state(asOf: .revision(7))
        XCTAssertEqual(mainAtFloor.preferences["a"]?.json, "10")
        await expect(.beyondHistory(oldestReadable: 7)) { _ = try await store.state(asOf: .revision(6), environment: "staging") }
    }
}

extension StoreSnapshot {
    /// Without when `default` was made and its latest revision: what the checks written before
    /// environments compare with a literal snapshot (``environmentsKeepTheirOwnStateUnderOneCounter`` checks them).
    var withoutEnvironmentDetails: StoreSnapshot {
        var snapshot = self
        for name in snapshot.environments.keys {
            snapshot.environments[name]?.createdAt = 0
            snapshot.environments[name]?.revision = 0
        }
        return snapshot
    }
}
