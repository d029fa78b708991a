import Foundation
import Synchronization
import XCTest
@testable import TidingsStore
import GRDB

/// The change table as the history: records say when, who, why and what they replaced; as-of
/// reads equal a replay from the start at every revision; retention by bytes and by age folds
/// what it drops into the base, so every retained revision stays readable.
final class HistoryStoreTests: XCTestCase {
    /// A clock the test moves (microsecond steps keep `at` strictly increasing per commit).
    final class MovableClock: Sendable {
        private let now = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        func read() -> Date { now.withLock { $0 } }
        func advance(by seconds: Double) { now.withLock { $0 = $0.addingTimeInterval(seconds) } }
    }

    func testRecordsSayWhenWhoWhyAndWhatTheyReplaced() async throws {
        let clock = MovableClock()
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self), clock: { clock.read() })
        _ = try await store.commit(StoreWrite([.setPreference(key: "a", json: "1")], actor: "deploy-bot"))
        clock.advance(by: 5)
        // A PATCH of three keys: one write, three records with the same time, actor and reason.
        let patch = try await store.commit(StoreWrite(
            [.setPreference(key: "a", json: "2"), .setPreference(key: "b", json: "\"x\""), .resetPreference(key: "a")],
            actor: "ops", reason: "incident 42"))
        XCTAssertEqual(patch.map(\.revision), [2, 3, 4])
        XCTAssertEqual(Set(patch.map(\.at)).count, 1)
        XCTAssertEqual(patch.first?.at, 1_800_000_005_000_000)
        XCTAssertEqual(patch.map(\.actor), ["ops", "ops", "ops"])
        XCTAssertEqual(patch.map(\.reason), ["incident 42", "incident 42", "incident 42"])
        XCTAssertEqual(patch.map(\.before), ["1", nil, "2"])
        _ = try await store.commit(StoreWrite([.addThing("X"), .replaceThings(["Y", "Z"]), .removeThing("Y")], actor: "api"))
        let read = try await store.changes(after: 0, limit: 100)
        XCTAssertEqual(read.dropFirst(4).map(\.before), [nil, #"["X"]"#, nil])
        // What the commit answered is what every reader reads back.
        XCTAssertEqual(Array(read[1...3]), patch)
        // The clock stepping back does not make a record older than the one before it.
        clock.advance(by: -60)
        let later = try await store.commit(StoreWrite([.setPreference(key: "a", json: "9")], actor: "api"))
        XCTAssertEqual(later.first?.at, 1_800_000_005_000_000)
        await store.close()
    }

    func testPagesReadBothWaysAndFilter() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        for n in 1...6 { _ = try await store.commit([.setPreference(key: n % 2 == 0 ? "even" : "odd", json: "\(n)")]) }
        _ = try await store.commit([.addThing("T"), .setPosts("{}")])  // 7, 8 (posts: not a record)
        let newest = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 3))
        XCTAssertEqual(newest.map(\.revision), [7, 6, 5], "posts changes are not records")
        let older = try await store.history(HistoryQuery(direction: .newestFirst(before: 5), limit: 10))
        XCTAssertEqual(older.map(\.revision), [4, 3, 2, 1])
        let forward = try await store.history(HistoryQuery(direction: .oldestFirst(after: 2), limit: 2))
        XCTAssertEqual(forward.map(\.revision), [3, 4])
        let evens = try await store.history(HistoryQuery(direction: .oldestFirst(after: 0), limit: 10, things: false, keys: ["even"]))
        XCTAssertEqual(evens.map(\.revision), [2, 4, 6])
        let things = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 10, preferences: false))
        XCTAssertEqual(things.map(\.revision), [7])
        await store.close()
    }

    /// The property: for a scripted random sequence of writes (long enough to pass several
    /// checkpoints), the state as of every revision equals a replay of the sequence from the
    /// start up to that revision.
    func testAsOfEveryRevisionEqualsAReplayFromTheStart() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        var model = Model()
        var generator = SeededGenerator(seed: 23)
        var states: [HistoricalState] = [model.state(at: 0)]
        while model.revision < 2_600 {
            // Only a write's first operation removes a thing (its target exists when the write starts).
            let operations = (0..<Int.random(in: 1...12, using: &generator)).map { index in
                model.randomOperation(using: &generator, removing: index == 0)
            }
            let changes = try await store.commit(StoreWrite(operations, actor: "prop"))
            for change in changes {
                model.apply(change)
                states.append(model.state(at: change.revision))
            }
        }
        for revision in 0...model.revision {
            let read = try await store.state(asOf: .revision(revision))
            XCTAssertEqual(read, states[Int(revision)], "as of revision \(revision)")
        }
        let future = await storeError { try await store.state(asOf: .revision(model.revision + 1)) }
        XCTAssertEqual(future, .futureRevision(current: model.revision))
        await store.close()
    }

    func testRetentionByBytesFoldsWhatItDropsIntoTheBase() async throws {
        let limits = ChangeStoreLimits(historyBytes: 2_000)
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self), limits: limits)
        var model = Model()
        var generator = SeededGenerator(seed: 7)
        var states: [HistoricalState] = [model.state(at: 0)]
        while model.revision < 400 {
            let changes = try await store.commit(StoreWrite([model.randomOperation(using: &generator)]))
            for change in changes {
                model.apply(change)
                states.append(model.state(at: change.revision))
            }
        }
        let retained = try await store.history(HistoryQuery(direction: .oldestFirst(after: 0), limit: 1_000))
        let oldest = try XCTUnwrap(retained.first?.revision)
        XCTAssertGreaterThan(oldest, 1, "old records were dropped")
        XCTAssertLessThanOrEqual(retained.reduce(0) { $0 + $1.byteCount }, 2_000)
        let gone = await storeError { try await store.state(asOf: .revision(oldest - 2)) }
        XCTAssertEqual(gone, .beyondHistory(oldestReadable: oldest - 1))
        for revision in (oldest - 1)...model.revision {
            let read = try await store.state(asOf: .revision(revision))
            XCTAssertEqual(read, states[Int(revision)], "as of revision \(revision)")
        }
        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.things, model.things, "the current state is never dropped")
        await store.close()
    }

    /// `--history-bytes` bounds everything the history keeps: the checkpoints of the whole
    /// state count with the rows, and a large state changed by small writes is not copied every
    /// thousand revisions (a checkpoint is written only once the rows since the last one hold
    /// at least its bytes).
    func testCheckpointsCountAgainstTheHistoryBytesAndAsOfStillReadsEveryRetainedRevision() async throws {
        let directory = makeTemporaryDirectory(self)
        let bound = 120_000
        let store = try SQLiteStore(directory: directory, limits: ChangeStoreLimits(historyBytes: bound, keepCount: 10, keepBytes: 1_000))
        _ = try await store.commit([.setPreference(key: "big", json: "\"" + String(repeating: "q", count: 45_000) + "\"")])
        // Writes of seven keys: the same revisions in fewer commits.
        for n in 0..<500 { _ = try await store.commit((1...7).map { .setPreference(key: "n\($0)", json: "\(n * 7 + $0)") }) }
        let queue = try DatabaseQueue(path: directory.appendingPathComponent(SQLiteStore.fileName).path)
        let (rows, checkpoints, counted) = try await queue.read { db in
            (try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(bytes), 0) FROM change")!,
             try Int.fetchOne(db, sql: "SELECT COALESCE(SUM(LENGTH(CAST(state AS BLOB))), 0) FROM checkpoint")!,
             try Int.fetchOne(db, sql: "SELECT historyBytes FROM meta WHERE id = 1")!)
        }
        XCTAssertLessThanOrEqual(rows + checkpoints, bound, "rows \(rows) + checkpoints \(checkpoints)")
        XCTAssertEqual(counted, rows + checkpoints, "the running total is what the tables hold")
        // Whatever was kept, every retained revision still reads as of itself.
        let retained = try await store.history(HistoryQuery(direction: .oldestFirst(after: 0), limit: 1_000))
        let oldest = try XCTUnwrap(retained.first?.revision)
        for revision in stride(from: oldest - 1, through: 3_501, by: 97) {
            let state = try await store.state(asOf: .revision(revision))
            XCTAssertEqual(state.preferences["big"]?.json?.utf8.count, 45_002, "as of \(revision)")
        }
        await store.close()
    }

    func testRetentionByAgeOnAMovedClockKeepsTheNewestWindow() async throws {
        let clock = MovableClock()
        let limits = ChangeStoreLimits(historyAge: .seconds(86_400), keepCount: 2, keepBytes: 1 << 20)
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self), limits: limits, clock: { clock.read() })
        for n in 1...5 { _ = try await store.commit([.setPreference(key: "k\(n % 2)", json: "\(n)")]) }  // 1...5 on day 0
        clock.advance(by: 3_600)
        let before = try await store.state(asOf: .time(1_800_000_000_000_000 + 1_800_000_000))
        XCTAssertEqual(before.revision, 5, "the last revision committed at or before the time")
        clock.advance(by: 2 * 86_400)
        _ = try await store.commit([.setPreference(key: "k0", json: "6")])  // 6, two days later
        // Older than a day: 1...5; but the newest two records (5 and 6) are kept whatever the age.
        let retained = try await store.history(HistoryQuery(direction: .oldestFirst(after: 0), limit: 100))
        XCTAssertEqual(retained.map(\.revision), [5, 6])
        let gone = await storeError { try await store.state(asOf: .revision(3)) }
        XCTAssertEqual(gone, .beyondHistory(oldestReadable: 4))
        let atFloor = try await store.state(asOf: .revision(4))
        XCTAssertEqual(atFloor.preferences["k0"], StoredPreference(json: "4", revision: 4))
        XCTAssertEqual(atFloor.preferences["k1"], StoredPreference(json: "3", revision: 3))
        let byTime = try await store.state(asOf: .time(1_800_000_000_000_000 + 1_800_000_000))
        XCTAssertEqual(byTime.revision, 5)
        let tooOld = await storeError { try await store.state(asOf: .time(1_000)) }
        XCTAssertEqual(tooOld, .beyondHistory(oldestReadable: 4))
        await store.close()
    }

    private func storeError(_ body: () async throws -> some Any) async -> StoreError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? StoreError
        }
    }
}

/// The replay model: the state a sequence of changes leads to, applied from the start.
struct Model {
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
        case .posts, .environment: break
        }
    }

    func state(at revision: UInt64) -> HistoricalState {
        HistoricalState(revision: revision, preferences: preferences, things: things, thingsRevision: thingsRevision)
    }

    /// An operation that changes something (so every one takes a revision) — mostly.
    mutating func randomOperation(using generator: inout SeededGenerator, removing: Bool = true) -> WriteOperation {
        switch Int.random(in: 0..<10, using: &generator) {
        case 0..<6:
            let key = "k\(Int.random(in: 0..<5, using: &generator))"
            return Int.random(in: 0..<5, using: &generator) == 0
                ? .resetPreference(key: key) : .setPreference(key: key, json: "\(Int.random(in: 0..<1_000_000, using: &generator))")
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
struct SeededGenerator: RandomNumberGenerator {
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

/// A database written before the history existed (schema v3) migrates: its change rows become
/// records (the migration's time, no actor), as-of reads start where they can.
final class HistoryMigrationTests: XCTestCase {
    private func makeVersion3Database(in directory: URL, changes: [(Int64, String, String?, String?, String)], revision: Int64) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory.appendingPathComponent(SQLiteStore.fileName).path)
        try Schema.migrator.migrate(queue, upTo: "v3")
        try queue.write { db in
            for (rev, kind, op, subject, value) in changes {
                try db.execute(sql: "INSERT INTO change (revision, kind, op, subject, value, bytes) VALUES (?, ?, ?, ?, ?, 40)",
                               arguments: [rev, kind, op, subject, value])
            }
            try db.execute(sql: "INSERT INTO preference (key, value, revision) VALUES ('age', '7', 3)")
            try db.execute(sql: "INSERT INTO thing (text, position) VALUES ('X', 1)")
            try db.execute(sql: "UPDATE meta SET revision = ?, thingsRevision = 2, historyBytes = ?", arguments: [revision, changes.count * 40])
        }
        try queue.close()
    }

    func testAnExistingDatabaseMigratesAndItsRowsBecomeHistory() async throws {
        let directory = makeTemporaryDirectory(self)
        try makeVersion3Database(in: directory, changes: [
            (1, "preference", nil, "age", "6"), (2, "things", "add", "X", #"["X"]"#), (3, "preference", nil, "age", "7"),
        ], revision: 3)
        let store = try SQLiteStore(directory: directory)
        let records = try await store.history(HistoryQuery(direction: .oldestFirst(after: 0), limit: 10))
        XCTAssertEqual(records.map(\.revision), [1, 2, 3])
        XCTAssertTrue(records.allSatisfy { $0.actor.isEmpty && $0.at > 0 })
        let past = try await store.state(asOf: .revision(1))
        XCTAssertEqual(past.preferences["age"], StoredPreference(json: "6", revision: 1))
        XCTAssertEqual(past.things, [])
        let changes = try await store.commit(StoreWrite([.setPreference(key: "age", json: "8")], actor: "api"))
        XCTAssertEqual(changes.map(\.revision), [4])
        XCTAssertEqual(changes.first?.before, "7")
        XCTAssertEqual(changes.first?.actor, "api")
        await store.close()
    }

    func testADatabaseWhoseOldRowsWerePrunedReadsAsOfFromTheMigration() async throws {
        let directory = makeTemporaryDirectory(self)
        try makeVersion3Database(in: directory, changes: [(3, "preference", nil, "age", "7")], revision: 3)
        let store = try SQLiteStore(directory: directory)
        let gone = await historyError { try await store.state(asOf: .revision(2)) }
        XCTAssertEqual(gone, .beyondHistory(oldestReadable: 3))
        let now = try await store.state(asOf: .revision(3))
        XCTAssertEqual(now.preferences["age"], StoredPreference(json: "7", revision: 3))
        XCTAssertEqual(now.things, ["X"])
        await store.close()
    }

    private func historyError(_ body: () async throws -> some Any) async -> StoreError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error as? StoreError
        }
    }
}
