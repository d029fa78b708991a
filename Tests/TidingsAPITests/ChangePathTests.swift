import Foundation
import Logging
import Observing
import OpenCombine
import TidingsModel
import TidingsStore
import XCTest
@testable import TidingsAPI
import TestFixtures

/// The one change path in-process: ``ChangeFeed`` and ``TidingsState/apply(_:)`` with no
/// binary and no socket.
@MainActor
final class ChangePathTests: XCTestCase {
    private var cancellables: [AnyCancellable] = []

    private func makeState(_ snapshot: StoreSnapshot = StoreSnapshot(revision: 0, preferences: [:], things: [], thingsRevision: 0),
                           replay: Int = 100) -> TidingsState {
        let preferences = TidingsPreferences.builtIn()
        return TidingsState(preferences: preferences, snapshot: snapshot, textCase: .upper,
                            journal: EventJournal(capacity: replay, maxBytes: 1 << 20, floor: snapshot.revision),
                            logger: Logger(label: "test"))
    }

    private func age(_ revision: UInt64, _ value: Int) -> Change {
        Change(revision: revision, kind: .preference(key: "age", json: "\(value)"))
    }

    /// Waits on the main actor (the feed's reads hop back here) until `condition` holds.
    private func eventually(_ what: String, timeout: Double = 5, _ condition: () -> Bool) async {
        if await !TestFixtures.eventually(within: timeout, every: 0.002, { () async in condition() }) {
            XCTFail("timed out waiting for \(what)")
        }
    }

    func testOutOfOrderDeliveriesAreAppliedInRevisionOrder() async {
        let state = makeState()
        let store = ScriptedStore()
        let feed = ChangeFeed(store: store, state: state, logger: Logger(label: "test"))
        var heard: [(UInt64, PreferenceValue)] = []
        state.preferences.changes(forKey: "age")!.dropFirst().sink { heard.append(($0.revision, $0.value)) }.store(in: &cancellables)

        feed.deliver([age(3, 30), age(2, 20)])
        XCTAssertEqual(state.revision, 0, "nothing is applied past a missing revision")
        feed.deliver([age(1, 10)])
        XCTAssertEqual(state.revision, 3)
        XCTAssertEqual(heard.map(\.0), [1, 2, 3])
        XCTAssertEqual(heard.map(\.1), [.integer(10), .integer(20), .integer(30)])
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(30))
        feed.deliver([age(2, 20)])
        XCTAssertEqual(heard.count, 3, "a duplicate is dropped")
    }

    func testAMissingChangeIsReadFromTheStoreBeforeLaterOnesApply() async {
        let state = makeState()
        let store = ScriptedStore()
        let feed = ChangeFeed(store: store, state: state, logger: Logger(label: "test"))
        // Another instance committed 1 and 2; this instance's own commit took 3.
        store.append([age(1, 10), Change(revision: 2, kind: .things(op: .add, thing: "YOLO", list: ["YOLO"]))], ring: false)
        feed.deliver([age(3, 30)])
        await eventually("the gap is filled") { state.revision == 3 }
        XCTAssertEqual(state.things.things, ["YOLO"])
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(30))
        XCTAssertEqual(state.revision(ofPreference: "age"), 3)
        XCTAssertEqual(state.thingsRevision, 2)
    }

    /// Another instance committed 1 and 2; this instance's own commit took 3 and 4 and is
    /// answered first. The read that fills the gap stops before 3: the instance's own rows are
    /// not read back (two instances on PostgreSQL read 1.3 rows per row written before).
    func testTheReadThatFillsAGapDoesNotReadTheInstancesOwnWaitingCommitsAgain() async {
        let state = makeState()
        let store = ScriptedStore()
        let feed = ChangeFeed(store: store, state: state, logger: Logger(label: "test"))
        let own = [age(3, 30), age(4, 40)]
        store.append([age(1, 10), age(2, 20)] + own, ring: false)
        await feed.deliverCommitted(own.map { state.committed($0) })
        await eventually("the gap is filled and the commit applied") { state.revision == 4 }
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(40))
        XCTAssertEqual(store.rowsRead, 2, "rows 1 and 2 only")
    }

    /// A read after another instance's doorbell applied this instance's commit before its
    /// answer came: the answer is recognised as that same commit without asking the store again.
    func testACommitAReadAlreadyAppliedIsNotCheckedWithTheStoreAgain() async {
        let state = makeState()
        let store = ScriptedStore()
        let feed = ChangeFeed(store: store, state: state, logger: Logger(label: "test"))
        feed.start()
        await eventually("the first catch-up read") { store.reads >= 1 }
        let own = age(2, 20)
        store.append([age(1, 10), own])
        await feed.waitUntilApplied(2)
        let reads = store.reads
        await feed.deliverCommitted([state.committed(own)])
        XCTAssertEqual(store.reads, reads, "no read for a commit a read applied")
        XCTAssertEqual(state.revision, 2)
        // A different commit at an applied revision (the database went back) is still checked.
        await feed.deliverCommitted([state.committed(age(2, 21))])
        XCTAssertEqual(store.reads, reads + 1, "checked with the store")
    }

    func testTheDoorbellBringsOtherInstancesChangesAndWaitersResume() async {
        let state = makeState()
        let store = ScriptedStore()
        let feed = ChangeFeed(store: store, state: state, logger: Logger(label: "test"))
        feed.start()
        store.append([age(1, 11), age(2, 12)])
        await feed.waitUntilApplied(2)
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(12))
    }

    func testThingsAreRepairedFromTheStoresListWhenMemoryDisagrees() async {
        let state = makeState(StoreSnapshot(revision: 0, preferences: [:], things: ["A"], thingsRevision: 0))
        let store = ScriptedStore()
        let feed = ChangeFeed(store: store, state: state, logger: Logger(label: "test"))
        var updates: [ThingChange] = []
        state.things.updates.sink { updates.append($0.change) }.store(in: &cancellables)
        // The store says the list is now [B, C] after adding C: memory (A) is repaired to it.
        feed.deliver([Change(revision: 1, kind: .things(op: .add, thing: "C", list: ["B", "C"]))])
        XCTAssertEqual(state.things.things, ["B", "C"])
        XCTAssertEqual(updates, [.replace])
        feed.deliver([Change(revision: 2, kind: .things(op: .add, thing: "D", list: ["B", "C", "D"]))])
        XCTAssertEqual(updates, [.replace, .add("D")], "consistent changes keep their own op")
    }

    func testAChangeToAKeyThisInstanceDoesNotDeclareOnlyAdvancesTheRevision() async {
        let state = makeState()
        let feed = ChangeFeed(store: ScriptedStore(), state: state, logger: Logger(label: "test"))
        feed.deliver([Change(revision: 1, kind: .preference(key: "somebody-elses", json: "1")),
                      Change(revision: 2, kind: .preference(key: "age", json: "\"not an integer\""))])
        XCTAssertEqual(state.revision, 2)
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(5), "a value that does not fit reads as the default")
    }

    func testPrunedHistoryRebuildsMemoryFromTheSnapshotAndResetsStreams() async {
        let state = makeState()
        let store = ScriptedStore()
        let feed = ChangeFeed(store: store, state: state, logger: Logger(label: "test"))
        feed.start()
        var reloads = 0
        state.reloads.sink { reloads += 1 }.store(in: &cancellables)
        store.prune(through: 40, snapshot: StoreSnapshot(
            revision: 42, preferences: ["age": StoredPreference(json: "9", revision: 41)],
            things: ["X"], thingsRevision: 42))
        await eventually("the reload") { state.revision == 42 }
        XCTAssertEqual(reloads, 1)
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(9))
        XCTAssertEqual(state.revision(ofPreference: "age"), 41)
        XCTAssertEqual(state.things.things, ["X"])
        XCTAssertNil(state.journal.entries(after: 10, current: 42) { _ in true }, "resuming from before the reload is a reset")
    }

    func testConditionsAreDecidedByTheStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-api-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(directory: directory)
        let state = makeState()
        let feed = ChangeFeed(store: store, state: state, logger: Logger(label: "test"))
        let writes = WritePipeline(state: state, store: store, feed: feed)
        func submit(_ request: WriteRequest) async -> Result<WriteOutcome, WriteFailure> {
            await withCheckedContinuation { continuation in writes.submit(request) { continuation.resume(returning: $0) } }
        }
        guard case .success = await submit(.preferences(PreferencePatch(["age": .value(.integer(6))]))) else { return XCTFail() }
        let stale = await submit(.preferences(PreferencePatch(["age": .value(.integer(7))]), ifMatch: ["age": [0]]))
        guard case let .failure(.preconditionFailed(key, current)) = stale else { return XCTFail("\(stale)") }
        XCTAssertEqual(key, "age")
        XCTAssertEqual(current, 1)
        guard case .success = await submit(.addThing("yolo")) else { return XCTFail() }
        guard case .failure(.thing(.duplicate("YOLO"))) = await submit(.addThing(" Yolo ")) else { return XCTFail() }
        guard case .failure(.thing(.notFound("NOPE"))) = await submit(.removeThing("nope")) else { return XCTFail() }
        XCTAssertEqual(state.revision, 2, "failed conditions take no revision")
        await store.close()
    }
}
