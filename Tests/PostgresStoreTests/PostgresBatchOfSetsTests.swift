import Foundation
import XCTest
@testable import TidingsStore
import TestFixtures

/// A batch in which every write sets one preference goes through `tidings_sets_v1` (schema
/// version 7), which keeps the batch's values in memory and writes its rows at the end. It must
/// answer and store exactly what applying the writes one by one does: here one batch of such
/// writes — the same key again in the batch, a write equal to what the batch already set, a
/// value equal to the default, a reset, If-Match on a revision taken earlier in the batch (met
/// and not), a global If-Match, an unknown environment, the same key in another environment,
/// actor and reason — is committed as ONE transaction on PostgreSQL, and compared with the same
/// writes committed one at a time on SQLite (the reference: the conformance suite holds the two
/// stores to the same rules).
final class PostgresBatchOfSetsTests: PostgresTestCase {
    func testABatchOfSetsAnswersAndStoresAsWriteByWrite() async throws {
        let postgres = try await makeStore(try makeDatabase())
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tidings-batch-of-sets-\(UUID().uuidString)", isDirectory: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        let sqlite = try SQLiteStore(directory: directory)
        addTeardownBlock { await sqlite.close() }

        let staging = StoreWrite([.createEnvironment(copiedFrom: nil, limit: 10)], environment: "staging")
        _ = try await postgres.commit(staging)
        _ = try await sqlite.commit(staging)
        // Revision 1 is staging's creation; the batch starts at 2.
        var global = StoreWrite([set("name", #""g""#, default: #""x""#)])
        global.expectedGlobalRevisions = [7]
        let writes: [StoreWrite] = [
            StoreWrite([set("name", #""a""#, default: #""x""#)]),                                  // 2
            StoreWrite([set("name", #""a""#, default: #""x""#)]),                                  // nothing to do
            StoreWrite([set("name", #""b""#, default: #""x""#)], expectedRevisions: ["name": [2]]), // 3, met
            StoreWrite([set("color", #""x""#, default: #""x""#)]),                                 // the default: nothing
            StoreWrite([set("name", nil, default: #""x""#)], actor: "alice", reason: "back"),      // 4, reset
            StoreWrite([set("name", #""c""#, default: #""x""#)], expectedRevisions: ["name": [3]]), // 412, now 4
            StoreWrite([set("name", #""s""#, default: #""x""#)], environment: "staging"),          // 5
            StoreWrite([set("name", #""u""#, default: #""x""#)], environment: "nope"),             // unknown
            StoreWrite([set("size", "1", default: "0")], expectedRevisions: ["size": [0]], reason: "first"), // 6
            StoreWrite([set("name", #""x""#, default: #""x""#)]),                                  // reset → default value: nothing
            global,                                                                                  // 7 expected, current 6: 412
            StoreWrite([set("name", #""d""#, default: #""x""#)], expectedRevisions: ["name": [4]], actor: "bob"), // 7
        ]
        let batch = await postgres.commitGroup(writes, on: postgres.writer)
        var oneByOne: [Result<[Change], StoreError>] = []
        for write in writes {
            do { oneByOne.append(.success(try await sqlite.commit(write))) } catch let error as StoreError {
                oneByOne.append(.failure(error))
            }
        }
        XCTAssertEqual(batch.count, writes.count)
        for (index, (got, want)) in zip(batch, oneByOne).enumerated() {
            XCTAssertEqual(got.map { $0.map(\.withoutTime) }, want.map { $0.map(\.withoutTime) }, "write \(index)")
        }
        XCTAssertEqual(try batch[2].get().first?.before, #""a""#)
        XCTAssertEqual(try batch[11].get().map(\.revision), [7])

        let stored = try await postgres.changes(after: 0, limit: 100).map(\.withoutTime)
        let referenceRows = try await sqlite.changes(after: 0, limit: 100).map(\.withoutTime)
        XCTAssertEqual(stored, referenceRows)
        XCTAssertEqual(stored.map(\.revision), Array(1...7))
        let everything = HistoryQuery(direction: .oldestFirst(after: 0), limit: 100, environments: .every)
        let history = try await postgres.history(everything).map(\.withoutTime)
        let referenceHistory = try await sqlite.history(everything).map(\.withoutTime)
        XCTAssertEqual(history, referenceHistory)
        for environment in ["default", "staging"] {
            let mine = try await postgres.state(asOf: .revision(7), environment: environment)
            let reference = try await sqlite.state(asOf: .revision(7), environment: environment)
            XCTAssertEqual(mine.preferences, reference.preferences, environment)
        }
        let snapshot = try await postgres.loadSnapshot()
        let reference = try await sqlite.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 7)
        XCTAssertEqual(snapshot.preferences, reference.preferences)
        XCTAssertEqual(snapshot.preferences["name"], StoredPreference(json: #""d""#, revision: 7))
    }
}

/// A batch of plain sets (no `If-Match`) goes to `tidings_set_batch_v1` as arrays (schema
/// version 10). It must answer and store exactly what the JSON call (`tidings_commit_v3`) does
/// with the same batch: here both run on two fresh databases and every row is compared, the
/// history's byte counts and the counter row included.
final class PostgresSetBatchTests: PostgresTestCase {
    func testTheArrayCallAnswersAndStoresAsTheJSONCall() async throws {
        let arrays = try await makeStore(try makeDatabase())
        let json = try await makeStore(try makeDatabase())
        for store in [arrays, json] {
            _ = try await store.commit(StoreWrite([.createEnvironment(copiedFrom: nil, limit: 10)], environment: "staging"))
            _ = try await store.commit(StoreWrite([set("size", "1", default: "0")]))
        }
        let writes: [StoreWrite] = [
            StoreWrite([set("name", #""a""#, default: #""x""#)]),                                   // 3
            StoreWrite([set("name", #""a""#, default: #""x""#)], actor: "carol"),                   // the same: nothing
            StoreWrite([set("name", nil, default: #""x""#)], actor: "alice", reason: "back"),       // 4, reset
            StoreWrite([set("name", #""x""#, default: #""x""#)]),                                   // the default again: nothing
            StoreWrite([set("name", #""s""#, default: #""x""#)], environment: "staging"),           // 5
            StoreWrite([set("name", #""u""#, default: #""x""#)], environment: "nope"),              // unknown
            StoreWrite([set("size", "2", default: "0")], reason: "grow"),                           // 6, before 1
            StoreWrite([set("name", #""é → ü""#, default: #""x""#)], actor: "bób", reason: "ünïcode"), // 7: bytes counted in UTF-8
            StoreWrite([set("size", nil, default: "0")]),                                           // 8, reset
            StoreWrite([set("color", #""red""#, default: #""red""#)]),                              // never set, the default: nothing
            StoreWrite([set("name", #""s""#, default: #""x""#)], environment: "staging"),           // the same in staging: nothing
            StoreWrite([set("name", #""t""#, default: #""x""#)], reason: "", environment: "staging"), // 9, an empty reason
        ]
        XCTAssertNotNil(PostgresSetBatch(writes), "every write is a plain set: the array call")
        let viaArrays = await arrays.commitGroup(writes, on: arrays.writer)
        let call = try json.commitCall(writes)
        let answer = try await json.withConnection(json.writer) { connection in
            try await PostgresStore.answer(of: call, on: connection, logger: .testing)
        }
        let viaJSON = try PostgresBatch.decode(answer, writes: writes)
        XCTAssertEqual(viaArrays.count, writes.count)
        for (index, (got, want)) in zip(viaArrays, viaJSON).enumerated() {
            XCTAssertEqual(got.map { $0.map(\.withoutTime) }, want.map { $0.map(\.withoutTime) }, "write \(index)")
        }
        XCTAssertEqual(try viaArrays[7].get().map(\.revision), [7])
        XCTAssertEqual(try viaArrays[6].get().first?.before, "1")

        func rows(_ store: PostgresStore) throws -> String {
            try [
                "SELECT revision, kind, op, subject, value, bytes, actor, reason, before, environment FROM change ORDER BY revision",
                "SELECT environment, key, value, revision FROM preference ORDER BY environment, key",
                "SELECT name, revision, things_revision FROM environment ORDER BY name",
                "SELECT revision, history_bytes, things_revision FROM meta",
            ].map { try cluster().psql($0, database: store.url.database) }.joined(separator: "\n")
        }
        let stored = try rows(arrays)
        XCTAssertEqual(stored, try rows(json))
        XCTAssertTrue(stored.contains("ünïcode"), stored)
        let snapshot = try await arrays.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 9)
        XCTAssertEqual(snapshot.preferences["name"], StoredPreference(json: #""é → ü""#, revision: 7))
    }

    /// Only plain sets take the array call: any condition, schedule or other operation keeps the
    /// batch on the JSON call, which decides them.
    func testOnlyPlainSetsTakeTheArrayCall() {
        var global = StoreWrite([set("k", "1")])
        global.expectedGlobalRevisions = [3]
        XCTAssertNil(PostgresSetBatch([global]))
        XCTAssertNil(PostgresSetBatch([StoreWrite([set("k", "1")], expectedRevisions: ["k": [1]])]))
        XCTAssertNil(PostgresSetBatch([StoreWrite([set("k", "1"), set("j", "2")])]))
        XCTAssertNil(PostgresSetBatch([StoreWrite([set("k", "1")]), StoreWrite([.addThing("A")])]))
        XCTAssertNil(PostgresSetBatch([]))
        XCTAssertNotNil(PostgresSetBatch([StoreWrite([set("k", "1")]), StoreWrite([set("k", nil)], environment: "e")]))
    }
}

private extension Change {
    /// The change without its commit time (the two stores commit at different moments).
    var withoutTime: Change {
        var change = self
        change.at = 0
        return change
    }
}
