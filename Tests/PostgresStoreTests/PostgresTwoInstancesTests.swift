import Foundation
import XCTest
@testable import TidingsStore
import TestFixtures

/// Two PostgresStore instances on one database, as two Tidings instances would be.
final class PostgresTwoInstancesTests: PostgresTestCase {
    /// Collects revisions reported by concurrent writers.
    final class Revisions: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [UInt64: Change] = [:]
        func add(_ changes: [Change]) { lock.withLock { for change in changes { values[change.revision] = change } } }
        var all: [UInt64: Change] { lock.withLock { values } }
    }

    func testRevisionsAreContiguousAndInCommitOrderAcrossInstances() async throws {
        let url = try makeDatabase()
        let a = try await makeStore(url)
        let b = try await makeStore(url)
        let acknowledged = Revisions()
        let writersPerInstance = 8
        let writesPerWriter = 60
        // A tailer on B reads while the writers run: every read is a contiguous prefix (a
        // gap would throw), each read continues where the last one ended.
        let stop = PostgresDeadline.Flag()
        let tailer = Task { () -> [Change] in
            var seen: [Change] = []
            var last: UInt64 = 0
            while !stop.isSet {
                let batch = try await b.changes(after: last, limit: 500)
                if let first = batch.first { XCTAssertEqual(first.revision, last + 1) }
                seen += batch
                last = batch.last?.revision ?? last
                if batch.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
            }
            return seen
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (name, store) in [("a", a), ("b", b)] {
                for writer in 0..<writersPerInstance {
                    group.addTask {
                        for index in 0..<writesPerWriter {
                            let write = index % 5 == 0
                                ? StoreWrite([.addThing("\(name)\(writer)-\(index)")])
                                : StoreWrite([set("\(name)\(writer)", "\(index)")])
                            acknowledged.add(try await store.commit(write))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = UInt64(2 * writersPerInstance * writesPerWriter)
        let committed = acknowledged.all
        XCTAssertEqual(Set(committed.keys), Set(1...total), "every acknowledged write took its own revision, none missing")

        // The tailer catches up to the end and saw exactly what the writers were told.
        await waitUntil("the tailer to see every change") {
            (try? await b.changes(after: total, limit: 1)) == []
        }
        let history = try await a.changes(after: 0, limit: 10_000)
        XCTAssertEqual(history.map(\.revision), Array(1...total))
        XCTAssertEqual(history, (1...total).compactMap { committed[$0] })
        stop.set()
        let tailed = try await tailer.value
        XCTAssertEqual(tailed, Array(history.prefix(tailed.count)), "the tailer only ever saw prefixes")
        XCTAssertGreaterThan(tailed.count, 0)

        // The things list each change carries is the list after that change, in commit order.
        var list: [String] = []
        for change in history {
            if case let .things(.add, thing?, after) = change.kind {
                list.append(thing)
                XCTAssertEqual(after, list, "revision \(change.revision)")
            }
        }
        let snapshot = try await b.loadSnapshot()
        XCTAssertEqual(snapshot.revision, total)
        XCTAssertEqual(snapshot.things, list)
    }

    func testIfMatchOnOneRevisionThroughBothInstancesSucceedsOnce() async throws {
        let url = try makeDatabase()
        let a = try await makeStore(url)
        let b = try await makeStore(url)
        for round in 0..<20 {
            let current = try await a.loadSnapshot().preferences["k"]?.revision ?? 0
            async let first = storeError { try await a.commit(StoreWrite([set("k", "\(round * 2)")], expectedRevisions: ["k": [current]])) }
            async let second = storeError { try await b.commit(StoreWrite([set("k", "\(round * 2 + 1)")], expectedRevisions: ["k": [current]])) }
            let errors = await [first, second]
            let winner = try await a.loadSnapshot().preferences["k"]?.revision ?? 0
            XCTAssertEqual(errors.filter { $0 == nil }.count, 1, "round \(round): \(errors)")
            XCTAssertEqual(errors.filter { $0 == .preconditionFailed(key: "k", current: winner) }.count, 1, "round \(round): \(errors)")
        }
    }

    func testTheSameNewThingThroughBothInstancesIsAddedOnce() async throws {
        let url = try makeDatabase()
        let a = try await makeStore(url)
        let b = try await makeStore(url)
        for round in 0..<20 {
            let thing = "T\(round)"
            async let first = storeError { try await a.commit(StoreWrite([.addThing(thing)])) }
            async let second = storeError { try await b.commit(StoreWrite([.addThing(thing)])) }
            let errors = await [first, second]
            XCTAssertEqual(errors.filter { $0 == nil }.count, 1, "round \(round): \(errors)")
            XCTAssertEqual(errors.filter { $0 == .duplicateThing(thing) }.count, 1, "round \(round): \(errors)")
            // Removing it through both: one succeeds, one finds it gone.
            async let removeA = storeError { try await a.commit(StoreWrite([.removeThing(thing)])) }
            async let removeB = storeError { try await b.commit(StoreWrite([.removeThing(thing)])) }
            let removals = await [removeA, removeB]
            XCTAssertEqual(removals.filter { $0 == nil }.count, 1, "round \(round): \(removals)")
            XCTAssertEqual(removals.filter { $0 == .thingNotFound(thing) }.count, 1, "round \(round): \(removals)")
        }
        let snapshot = try await a.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 40)
        XCTAssertEqual(snapshot.things, [])
    }

    func testTheDoorbellRingsForTheOtherInstancesCommit() async throws {
        let url = try makeDatabase()
        let a = try await makeStore(url)
        // No safety-net poll within the test's time: only NOTIFY can ring B's doorbell.
        var quiet = PostgresStoreOptions.testing
        quiet.pollInterval = .seconds(120)
        let b = try await makeStore(url, options: quiet)
        let rings = RingCounter()
        b.watch { rings.ring() }
        // The LISTEN is in place once the watcher rang for its (re)connection.
        await waitUntil("B's watcher to listen") { rings.count > 0 }
        for value in 1...3 {
            let before = rings.count
            let answer = try await a.commit(StoreWrite([set("k", "\(value)")]))
            await waitUntil("B's doorbell after A's commit \(value)", timeout: 5) { rings.count > before }
            let seen = try await b.changes(after: UInt64(value - 1), limit: 10)
            XCTAssertEqual(seen, answer)
        }
    }

    func testInstancesStartingTogetherOnAnEmptyDatabaseAllMigrate() async throws {
        let url = try makeDatabase()
        let stores = try (0..<6).map { _ in try PostgresStore(url: url, logger: .testing, options: .testing) }
        for store in stores { addTeardownBlock { await store.close() } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores { group.addTask { try await store.open() } }
            try await group.waitForAll()
        }
        for (index, store) in stores.enumerated() {
            _ = try await store.commit(StoreWrite([set("k\(index)", "1")]))
        }
        let snapshot = try await stores[0].loadSnapshot()
        XCTAssertEqual(snapshot.revision, 6)
        let version = try cluster().psql("SELECT version FROM schema_version", database: String(url.split(separator: "/").last!))
        XCTAssertEqual(version.trimmingCharacters(in: .whitespacesAndNewlines), "\(PostgresSchema.version)")
    }
}
