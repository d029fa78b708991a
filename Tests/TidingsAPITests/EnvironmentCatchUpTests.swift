import Foundation
import Logging
import Observing
import TidingsModel
import TidingsStore
import XCTest
@testable import TidingsAPI

/// What an instance does with an environment name it does not know (issue 31: one created
/// through another instance a moment ago is in the store before its change arrives here): it
/// reads the store first (``ChangeFeed/caughtUp()``), and many such requests at once — random
/// names, say — share the feed's reads instead of costing one each.
@MainActor
final class EnvironmentCatchUpTests: XCTestCase {
    private func age(_ revision: UInt64, _ value: Int) -> Change {
        Change(revision: revision, kind: .preference(key: "age", json: "\(value)"))
    }

    private func makeFeed(_ store: ScriptedStore) -> (ChangeFeed, TidingsState) {
        let snapshot = StoreSnapshot(revision: 0, preferences: [:], things: [], thingsRevision: 0)
        let state = TidingsState(preferences: TidingsPreferences.builtIn(), snapshot: snapshot, textCase: .upper,
                                 journal: EventJournal(capacity: 100, maxBytes: 1 << 20, floor: 0), logger: Logger(label: "test"))
        return (ChangeFeed(store: store, state: state, logger: Logger(label: "test")), state)
    }

    func testWhatAnotherInstanceCommittedBeforeTheCallIsAppliedWhenItReturns() async {
        let store = ScriptedStore()
        let (feed, state) = makeFeed(store)
        feed.start()
        await feed.caughtUp()
        // Committed elsewhere, its doorbell not heard yet.
        store.append([age(1, 10), age(2, 20)], ring: false)
        XCTAssertEqual(state.revision, 0)
        await feed.caughtUp()
        XCTAssertEqual(state.revision, 2)
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(20))
    }

    func testAStoppedFeedLeavesNoCallerWaiting() async {
        let store = ScriptedStore()
        let (feed, _) = makeFeed(store)
        feed.start()
        // One caller waits for the read after the one in flight, which a stop never starts.
        let first = Task { @MainActor in await feed.caughtUp() }
        let second = Task { @MainActor in await feed.caughtUp() }
        await Task.yield()
        let returned = expectation(description: "both callers return")
        Task { @MainActor in
            await first.value
            await second.value
            await feed.caughtUp()   // and a caller after the stop returns at once
            returned.fulfill()
        }
        feed.stop()
        await fulfillment(of: [returned], timeout: 5)
    }

    func testManyCallersAtOnceShareTwoReads() async {
        let store = ScriptedStore()
        let (feed, _) = makeFeed(store)
        feed.start()
        await feed.caughtUp()
        let before = store.reads
        let callers = (0..<500).map { _ in Task { @MainActor in await feed.caughtUp() } }
        for caller in callers { await caller.value }
        // The first caller's read, and one more that every later caller waits for.
        XCTAssertLessThanOrEqual(store.reads - before, 2)
        XCTAssertGreaterThanOrEqual(store.reads - before, 1)
    }
}
