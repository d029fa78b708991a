import Foundation
import Synchronization
import XCTest
@testable import TidingsStore

/// Races between instances on one database: the counter row (or SQLite's write lock) orders
/// every committer of every instance, and conditions are decided against durable state.
extension ChangeStoreConformance {
    /// Writers on two instances at once: every acknowledged write took its own revision, the
    /// table is 1...n in commit order, and a tailer on the other instance only ever reads
    /// contiguous prefixes of it.
    static func revisionsAreContiguousAcrossConcurrentInstances(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let a = try await maker.open(database, limits: ChangeStoreLimits())
        let b = try await maker.open(database, limits: ChangeStoreLimits())
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

    /// Two writes naming the same key revision through two instances: exactly one succeeds,
    /// the other is told the winner's revision (the condition is decided in the transaction).
    static func ifMatchOnOneRevisionThroughTwoInstancesSucceedsOnce(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let a = try await maker.open(database, limits: ChangeStoreLimits())
        let b = try await maker.open(database, limits: ChangeStoreLimits())
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

    /// The same thing added (then removed) through two instances at once: once each.
    static func theSameThingThroughTwoInstancesIsAddedOnce(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let a = try await maker.open(database, limits: ChangeStoreLimits())
        let b = try await maker.open(database, limits: ChangeStoreLimits())
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

    /// Collects revisions reported by concurrent writers.
    final class Revisions: Sendable {
        private let values = Mutex<[UInt64: Change]>([:])
        func add(_ changes: [Change]) { values.withLock { for change in changes { $0[change.revision] = change } } }
        var all: [UInt64: Change] { values.withLock { $0 } }
    }
}
