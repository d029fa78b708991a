import Foundation
import TestFixtures
import XCTest
@testable import TidingsStore

/// PostgreSQL going away and coming back (each test has its own cluster to stop).
final class PostgresOutageTests: XCTestCase {
    private func makeCluster() throws -> PostgresCluster {
        let cluster = try PostgresCluster()
        addTeardownBlock { cluster.destroy() }
        return cluster
    }

    private func makeStore(_ url: String, options: PostgresStoreOptions = .testing) async throws -> PostgresStore {
        let store = try PostgresStore(url: url, logger: .testing, options: options)
        addTeardownBlock { await store.close() }
        try await store.open()
        return store
    }

    func testStoppedDatabaseAnswersUnavailablePromptlyAndRecovers() async throws {
        let cluster = try makeCluster()
        let store = try await makeStore(cluster.url)
        let rings = RingCounter()
        store.watch { rings.ring() }
        _ = try await store.commit(StoreWrite([set("k", "1")]))
        XCTAssertTrue(store.isAvailable)

        try cluster.stop()
        // The first commit after the stop may still try the old connection; it must fail
        // fast either way, and nothing it attempted may be half-applied.
        let started = Date()
        let error = await storeError { try await store.commit(StoreWrite([set("k", "2")])) }
        guard case .unavailable = error else { return XCTFail("expected .unavailable, got \(String(describing: error))") }
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "unavailable must be prompt")
        await waitUntil("isAvailable to turn false") { !store.isAvailable }
        let ringsWhileDown = rings.count

        // While down: every call throws .unavailable at once.
        for _ in 0..<3 {
            let began = Date()
            let commitError = await storeError { try await store.commit(StoreWrite([set("k", "3")])) }
            let readError = await storeError { try await store.changes(after: 0, limit: 10) }
            guard case .unavailable = commitError, case .unavailable = readError else {
                return XCTFail("expected .unavailable, got \(String(describing: commitError)), \(String(describing: readError))")
            }
            XCTAssertLessThan(Date().timeIntervalSince(began), 1)
        }

        try cluster.start()
        await waitUntil("the store to recover", timeout: 15) { store.isAvailable }
        await waitUntil("the doorbell after reconnecting") { rings.count > ringsWhileDown }
        var answer: [Change] = []
        await waitUntil("a commit to succeed again") {
            guard let changes = try? await store.commit(StoreWrite([set("k", "4")])) else { return false }
            answer = changes
            return true
        }
        // Nothing from the failed attempts was applied: the next revision is 2.
        XCTAssertEqual(answer.map(\.event), [Change(revision: 2, kind: .preference(key: "k", json: "4"))])
        let history = try await store.changes(after: 0, limit: 10)
        XCTAssertEqual(history.map(\.revision), [1, 2])
    }

    func testACrashedDatabaseIsNoticedByTheWatcherAndTheOtherInstanceCatchesUp() async throws {
        let cluster = try makeCluster()
        let a = try await makeStore(cluster.url)
        let b = try await makeStore(cluster.url)
        let rings = RingCounter()
        b.watch { rings.ring() }
        _ = try await a.commit(StoreWrite([set("k", "1")]))

        try cluster.stop(immediate: true)
        await waitUntil("both instances to notice the outage") { !a.isAvailable && !b.isAvailable }
        try cluster.start()
        await waitUntil("both instances to recover", timeout: 15) { a.isAvailable && b.isAvailable }

        var written: [Change] = []
        await waitUntil("a commit through A after the restart") {
            guard let changes = try? await a.commit(StoreWrite([set("k", "2")])) else { return false }
            written = changes
            return true
        }
        let before = rings.count
        _ = try await a.commit(StoreWrite([set("k", "3")]))
        await waitUntil("B's doorbell for A's commit after the restart") { rings.count > before }
        let seen = try await b.changes(after: 1, limit: 10)
        XCTAssertEqual(seen.first, written.first)
        XCTAssertEqual(seen.map(\.revision), [2, 3])
    }

    func testOpenWaitsForADatabaseThatIsStartingAndGivesUpOnOneThatIsNot() async throws {
        let cluster = try makeCluster()
        try cluster.stop()
        var options = PostgresStoreOptions.testing
        options.startupTimeout = .seconds(1)
        let gaveUp = try PostgresStore(url: cluster.url, logger: .testing, options: options)
        let began = Date()
        let error = await storeError { try await gaveUp.open() }
        guard case .unavailable = error else { return XCTFail("expected .unavailable, got \(String(describing: error))") }
        XCTAssertLessThan(Date().timeIntervalSince(began), 6)
        XCTAssertFalse(gaveUp.isAvailable)
        await gaveUp.close()

        options.startupTimeout = .seconds(30)
        let patient = try PostgresStore(url: cluster.url, logger: .testing, options: options)
        addTeardownBlock { await patient.close() }
        async let opened: Void = patient.open()
        try await Task.sleep(for: .milliseconds(300))
        try cluster.start()
        try await opened
        XCTAssertTrue(patient.isAvailable)
        let answer = try await patient.commit(StoreWrite([.addThing("A")]))
        XCTAssertEqual(answer.map(\.revision), [1])
    }
}
