import Foundation
import TestFixtures
import XCTest
@testable import TidingsStore

/// The history on PostgreSQL: the same records, as-of reads and retention as on SQLite,
/// computed by `tidings_commit_v2` and `tidings_as_of_v1`.
final class PostgresHistoryTests: PostgresTestCase {
    func testRecordsAndAsOfEveryRevisionEqualAReplayFromTheStart() async throws {
        let store = try await makeStore(try makeDatabase())
        var model = HistoryModel()
        var generator = HistorySeededGenerator(seed: 5)
        var states: [HistoricalState] = [model.state(at: 0)]
        var committed: [Change] = []
        while model.revision < 1_300 {
            let operations = (0..<Int.random(in: 1...12, using: &generator)).map { index in
                model.randomOperation(using: &generator, removing: index == 0)
            }
            let changes = try await store.commit(StoreWrite(operations, actor: "prop", reason: "r\(model.revision)"))
            committed += changes
            for change in changes {
                model.apply(change)
                states.append(model.state(at: change.revision))
            }
        }
        for revision in 0...model.revision {
            let read = try await store.state(asOf: .revision(revision))
            XCTAssertEqual(read, states[Int(revision)], "as of revision \(revision)")
        }
        // The commit's answer is what every reader reads back, when, who, why and before included.
        let read = try await store.changes(after: 0, limit: 2_000)
        XCTAssertEqual(read, committed)
        XCTAssertTrue(read.allSatisfy { $0.actor == "prop" && $0.at > 0 })
        let page = try await store.history(HistoryQuery(direction: .newestFirst(before: 100), limit: 5, things: false, keys: ["k1"]))
        XCTAssertEqual(page.map(\.revision), Array(committed.filter {
            if case .preference("k1", _) = $0.kind { return $0.revision < 100 } else { return false }
        }.map(\.revision).suffix(5).reversed()))
        let future = await storeError { try await store.state(asOf: .revision(model.revision + 1)) }
        XCTAssertEqual(future, .futureRevision(current: model.revision))
    }

    func testRetentionFoldsWhatItDropsAndAGlobalIfMatchIsDecidedInTheTransaction() async throws {
        let store = try await makeStore(try makeDatabase(), limits: ChangeStoreLimits(historyBytes: 2_000))
        var model = HistoryModel()
        var generator = HistorySeededGenerator(seed: 9)
        var states: [HistoricalState] = [model.state(at: 0)]
        while model.revision < 300 {
            for change in try await store.commit(StoreWrite([model.randomOperation(using: &generator)])) {
                model.apply(change)
                states.append(model.state(at: change.revision))
            }
        }
        let retained = try await store.history(HistoryQuery(direction: .oldestFirst(after: 0), limit: 1_000))
        let oldest = try XCTUnwrap(retained.first?.revision)
        XCTAssertGreaterThan(oldest, 1)
        let gone = await storeError { try await store.state(asOf: .revision(oldest - 2)) }
        XCTAssertEqual(gone, .beyondHistory(oldestReadable: oldest - 1))
        for revision in (oldest - 1)...model.revision {
            let read = try await store.state(asOf: .revision(revision))
            XCTAssertEqual(read, states[Int(revision)], "as of revision \(revision)")
        }
        var write = StoreWrite([.setPreference(key: "z", json: "1", defaultJSON: "null")])
        write.expectedGlobalRevisions = [model.revision - 1]
        let refused = await storeError { try await store.commit(write) }
        XCTAssertEqual(refused, .preconditionFailed(key: "", current: model.revision))
        write.expectedGlobalRevisions = [model.revision]
        let accepted = try await store.commit(write)
        XCTAssertEqual(accepted.map(\.revision), [model.revision + 1])
    }

    /// As on SQLite: checkpoints count against `history_bytes` with the rows, and one is written
    /// only once the rows since the last hold at least its bytes.
    func testCheckpointsCountAgainstTheHistoryBytes() async throws {
        let url = try makeDatabase()
        let bound = 120_000
        let store = try await makeStore(url, limits: ChangeStoreLimits(historyBytes: bound, keepCount: 10, keepBytes: 1_000))
        _ = try await store.commit([set("big", "\"" + String(repeating: "q", count: 45_000) + "\"")])
        // Batches of seven writes: the same revisions with fewer round trips.
        for n in 0..<500 {
            _ = try await store.commit(StoreWrite((1...7).map { set("n\($0)", "\(n * 7 + $0)") }))
        }
        let database = String(url.split(separator: "/").last!)
        let answer = try cluster().psql("""
            SELECT (SELECT COALESCE(sum(bytes), 0) FROM change) || ' ' ||
                   (SELECT COALESCE(sum(octet_length(state::text)), 0) FROM checkpoint) || ' ' ||
                   (SELECT history_bytes FROM meta WHERE id = 1)
            """, database: database)
        let numbers = answer.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { Int($0) }
        XCTAssertEqual(numbers.count, 3, answer)
        XCTAssertLessThanOrEqual(numbers[0] + numbers[1], bound, "rows \(numbers[0]) + checkpoints \(numbers[1])")
        XCTAssertEqual(numbers[2], numbers[0] + numbers[1], "the running total is what the tables hold")
        let retained = try await store.history(HistoryQuery(direction: .oldestFirst(after: 0), limit: 1_000))
        let oldest = try XCTUnwrap(retained.first?.revision)
        for revision in stride(from: oldest - 1, through: 3_501, by: 97) {
            let state = try await store.state(asOf: .revision(revision))
            XCTAssertEqual(state.preferences["big"]?.json?.utf8.count, 45_002, "as of \(revision)")
        }
    }
}

/// The replay model: the state a sequence of changes leads to, applied from the start.
struct HistoryModel {
    var revision: UInt64 = 0
    var preferences: [String: StoredPreference] = [:]
    var things: [String] = []
    var thingsRevision: UInt64 = 0
    private var nextThing = 0

    mutating func apply(_ change: Change) {
        precondition(change.revision == revision + 1)
        revision = change.revision
        switch change.kind {
        case let .preference(key, json): preferences[key] = StoredPreference(json: json, revision: change.revision)
        case let .things(_, _, list):
            things = list
            thingsRevision = change.revision
        case .posts: break
        }
    }

    func state(at revision: UInt64) -> HistoricalState {
        HistoricalState(revision: revision, preferences: preferences, things: things, thingsRevision: thingsRevision)
    }

    /// An operation that changes something (so every one takes a revision) — mostly.
    mutating func randomOperation(using generator: inout HistorySeededGenerator, removing: Bool = true) -> WriteOperation {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<6:
            let key = "k\(Int.random(in: 0..<5, using: &generator))"
            return Int.random(in: 0..<5, using: &generator) == 0
                ? .setPreference(key: key, json: nil, defaultJSON: "null") : .setPreference(key: key, json: "\(Int.random(in: 0..<1_000_000, using: &generator))", defaultJSON: "null")
        case 6, 7:
            nextThing += 1
            return .addThing("T\(nextThing)-\(revision)")
        case 8:
            return .replaceThings((0..<Int.random(in: 0..<4, using: &generator)).map { "R\($0)-\(revision)" })
        default:
            if removing, let thing = things.randomElement(using: &generator) { return .removeThing(thing) }
            return .posts
        }
    }
}

private extension WriteOperation {
    static var posts: WriteOperation { .setPosts("{\"n\":\(UInt64.random(in: 0..<UInt64.max))}") }
}

/// SplitMix64: the same sequence on every run.
struct HistorySeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE5_E4B9
        z = (z ^ (z >> 27)) &* 0x94D1_049F_2EB2_2EA4
        return z ^ (z >> 31)
    }
}
