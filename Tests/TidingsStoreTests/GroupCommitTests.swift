import Foundation
import Synchronization
import XCTest
@testable import TidingsStore
import TestFixtures

final class GroupCommitTests: XCTestCase {
    /// Holds the writer queue so that the commits submitted meanwhile form one batch.
    private func withWriterHeld(_ store: SQLiteStore, until count: Int, _ submit: () async -> Void) async {
        store.writer.queue.suspend()
        await submit()
        await waitUntil("\(count) commits queued") { store.writer.commits.pendingCount >= count }
        store.writer.queue.resume()
    }

    func testAFailingCallerInABatchDoesNotLoseTheOthers() async throws {
        let dir = makeTemporaryDirectory(self)
        let store = try SQLiteStore(directory: dir)
        _ = try await store.commit([.addThing("TAKEN")])
        let before = store.statistics

        // Five callers in one transaction; the third adds a duplicate after a valid write.
        let batches: [[StoreOperation]] = [
            [.setPreference(key: "a", json: "1")],
            [.addThing("NEW"), .setPreference(key: "b", json: "2")],
            [.setPreference(key: "bad", json: "3"), .addThing("TAKEN")],
            [.removeThing("TAKEN")],
            [.setPreference(key: "c", json: "\"c\"")],
        ]
        // Submitted straight to the writer, in order, while its queue is held: one batch.
        let answers = Mutex<[Int: Result<[UInt64], StoreError>]>([:])
        let answered = expectation(description: "every commit answered")
        answered.expectedFulfillmentCount = batches.count
        await withWriterHeld(store, until: batches.count) {
            for (index, operations) in batches.enumerated() {
                store.writer.submit(PendingCommit(write: StoreWrite(operations)) { result in
                    answers.withLock { $0[index] = result.map { $0.map(\.revision) }.mapError { $0 as! StoreError } }
                    answered.fulfill()
                })
            }
        }
        await fulfillment(of: [answered], timeout: 30)
        let results = (0..<batches.count).compactMap { answers.withLock { $0 }[$0] }

        XCTAssertEqual(results, [
            .success([2]), .success([3, 4]), .failure(.duplicateThing("TAKEN")), .success([5]), .success([6]),
        ])
        XCTAssertEqual(store.statistics.transactions - before.transactions, 1, "one transaction for the batch")
        XCTAssertEqual(store.statistics.commits - before.commits, 4)
        await store.close()

        let reopened = try SQLiteStore(directory: dir)
        let snapshot = try await reopened.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 6)
        XCTAssertEqual(snapshot.things, ["NEW"])
        XCTAssertEqual(snapshot.preferences["a"], StoredPreference(json: "1", revision: 2))
        XCTAssertEqual(snapshot.preferences["b"], StoredPreference(json: "2", revision: 4))
        XCTAssertEqual(snapshot.preferences["c"], StoredPreference(json: "\"c\"", revision: 6))
        XCTAssertNil(snapshot.preferences["bad"], "the failed caller's earlier operation is rolled back too")
        await reopened.close()
    }

    func testSixtyFourConcurrentCommittersGetDistinctIncreasingRevisionsAndAllDataSurvivesReopen() async throws {
        let dir = makeTemporaryDirectory(self)
        let store = try SQLiteStore(directory: dir)
        let clients = 64, commitsPerClient = 40
        let perClient: [[UInt64]] = try await withThrowingTaskGroup(of: (Int, [UInt64]).self) { group in
            for client in 0..<clients {
                group.addTask {
                    var revisions: [UInt64] = []
                    for n in 0..<commitsPerClient {
                        var operations: [StoreOperation] = [.setPreference(key: "c\(client)", json: "\(n)")]
                        if n % 10 == 0 { operations.append(.addThing("T\(client)-\(n)")) }
                        revisions += try await store.commit(operations)
                    }
                    return (client, revisions)
                }
            }
            var all = Array(repeating: [UInt64](), count: clients)
            for try await (client, revisions) in group { all[client] = revisions }
            return all
        }
        let expectedOperations = clients * (commitsPerClient + commitsPerClient / 10)
        for revisions in perClient {
            XCTAssertEqual(revisions.count, commitsPerClient + commitsPerClient / 10)
            XCTAssertEqual(revisions, revisions.sorted(), "a client's revisions follow its submission order")
        }
        let all = perClient.flatMap { $0 }
        XCTAssertEqual(Set(all).count, all.count, "revisions are distinct")
        XCTAssertEqual(Set(all), Set(1...UInt64(expectedOperations)), "and leave no gap")
        let stats = store.statistics
        XCTAssertEqual(stats.commits, UInt64(clients * commitsPerClient))
        XCTAssertLessThan(stats.transactions, stats.commits, "concurrent commits were grouped")
        print("64 committers: \(stats.commits) commits in \(stats.transactions) transactions")
        await store.close()

        let reopened = try SQLiteStore(directory: dir)
        let snapshot = try await reopened.loadSnapshot()
        XCTAssertEqual(snapshot.revision, UInt64(expectedOperations))
        for client in 0..<clients {
            let last = perClient[client].last!
            XCTAssertEqual(snapshot.preferences["c\(client)"], StoredPreference(json: "\(commitsPerClient - 1)", revision: last))
        }
        XCTAssertEqual(Set(snapshot.things).count, clients * commitsPerClient / 10)
        // Each client's things appear in its own submission order.
        for client in 0..<clients {
            let mine = snapshot.things.filter { $0.hasPrefix("T\(client)-") }
            XCTAssertEqual(mine, stride(from: 0, to: commitsPerClient, by: 10).map { "T\(client)-\($0)" })
        }
        await reopened.close()
    }

    func testCloseWaitsForInFlightCommits() async throws {
        let dir = makeTemporaryDirectory(self)
        let store = try SQLiteStore(directory: dir)
        var tasks: [Task<[UInt64], any Error>] = []
        store.writer.queue.suspend()
        for n in 0..<20 {
            tasks.append(Task { try await store.commit([.setPreference(key: "k\(n)", json: "\(n)")]) })
        }
        await waitUntil("20 commits queued") { store.writer.commits.pendingCount == 20 }
        let closing = Task { await store.close() }
        await waitUntil("close refuses new commits") { !store.writer.commits.isAcceptingCommits }
        store.writer.queue.resume()
        await closing.value
        for task in tasks { _ = try await task.value }   // every in-flight commit was acknowledged

        let reopened = try SQLiteStore(directory: dir)
        XCTAssertEqual(try reopened.syncSnapshot().preferences.count, 20)
        await reopened.close()
    }
}

final class GroupCommitFailureTests: XCTestCase {
    struct InjectedFailure: Error {}

    /// Submits `count` commits straight to the writer while its queue is held (one batch);
    /// the returned tasks wait for their answers.
    private func submitHeldBatch(_ store: SQLiteStore, count: Int) async -> [Task<Result<[UInt64], StoreError>, Never>] {
        store.writer.queue.suspend()
        let answers = (0..<count).map { _ in AnswerBox() }
        for n in 0..<count {
            let box = answers[n]
            store.writer.submit(PendingCommit(write: StoreWrite([.setPreference(key: "k\(n)", json: "\(n)")])) { result in
                box.set(result.map { $0.map(\.revision) }.mapError { $0 as! StoreError })
            })
        }
        return answers.map { box in Task { await box.value() } }
    }

    func testAFailedBatchTransactionIsRetriedCallerByCaller() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        store.writer.queue.sync { store.writer.beforeCommit = { if $0 > 1 { throw InjectedFailure() } } }
        let tasks = await submitHeldBatch(store, count: 8)
        store.writer.queue.resume()
        var revisions: [UInt64] = []
        for task in tasks { revisions += try await task.value.get() }
        XCTAssertEqual(Set(revisions), Set(1...8), "every caller succeeded on its own retry")
        XCTAssertEqual(store.statistics.transactions, 8)
        XCTAssertEqual(try store.syncSnapshot().preferences.count, 8)
        XCTAssertEqual(try store.syncSnapshot().revision, 8, "the failed batch consumed no revision")
        await store.close()
    }

    func testAFailingTransactionFailsItsCallersAndNoRevisionIsLost() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        store.writer.queue.sync { store.writer.beforeCommit = { _ in throw InjectedFailure() } }
        let tasks = await submitHeldBatch(store, count: 3)
        store.writer.queue.resume()
        for task in tasks {
            guard case .failure(.database) = await task.value else { return XCTFail("expected a database error") }
        }
        XCTAssertEqual(try store.syncSnapshot(), StoreSnapshot(revision: 0, preferences: [:], things: [], thingsRevision: 0))
        store.writer.queue.sync { store.writer.beforeCommit = nil }
        let next = try await store.commit([.addThing("A")])
        XCTAssertEqual(next, [1])
        await store.close()
    }

    func testTwoInstancesOnOneFileShareOneCounter() async throws {
        let dir = makeTemporaryDirectory(self)
        let first = try SQLiteStore(directory: dir)
        let second = try SQLiteStore(directory: dir)
        let all: [UInt64] = try await withThrowingTaskGroup(of: [UInt64].self) { group in
            for client in 0..<16 {
                let store = client % 2 == 0 ? first : second
                group.addTask {
                    var revisions: [UInt64] = []
                    for n in 0..<25 { revisions += try await store.commit([.setPreference(key: "c\(client)", json: "\(n)")]) }
                    XCTAssertEqual(revisions, revisions.sorted())
                    return revisions
                }
            }
            return try await group.reduce([], +)
        }
        XCTAssertEqual(all.sorted(), Array(1...400), "distinct revisions with no gap across both writers")
        XCTAssertEqual(try first.syncSnapshot().revision, 400)
        await first.close()
        await second.close()
    }
}

/// One commit's answer, awaited by a test.
final class AnswerBox: Sendable {
    private struct State {
        var result: Result<[UInt64], StoreError>?
        var waiter: CheckedContinuation<Result<[UInt64], StoreError>, Never>?
    }

    private let state = Mutex(State())

    func set(_ value: Result<[UInt64], StoreError>) {
        let waiting = state.withLock { state in
            state.result = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiting?.resume(returning: value)
    }

    func value() async -> Result<[UInt64], StoreError> {
        await withCheckedContinuation { continuation in
            let result = state.withLock { state in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let result { continuation.resume(returning: result) }
        }
    }
}
