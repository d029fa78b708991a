import Foundation
import Synchronization
import XCTest
@testable import TidingsStore
import TestFixtures
internal import PostgresNIO

/// Several commit lanes (``PostgresStoreOptions/commitLanes``): every write submitted is
/// answered, and the answers are the store's gap-free history; and no database call waits past
/// its deadline, even on a connection that closed under it.
final class PostgresCommitLanesTests: PostgresTestCase {
    /// postgres-nio never answers a query written to a connection whose channel has closed (the
    /// write fails with no one to tell): the deadline still ends the call. Before, it waited for
    /// the operation to end after closing its connection — for ever here, as a commit lane did in
    /// a fresh-clone run of PostgresThroughputMeasurement (64 writers waiting, every connection
    /// idle at the database for 6 minutes).
    func testACallOnAConnectionThatClosedUnderItEndsAtItsDeadline() async throws {
        let url = try makeDatabase()
        let configuration = try PostgresURL(url).configuration(connectTimeout: .seconds(5), statementTimeout: .seconds(5))
        let connection = try await PostgresDeadline.connect(configuration, timeout: .seconds(5), logger: .testing)
        try await connection.close()
        let ended = PostgresDeadline.Flag()
        let thrown = Tally()
        Task {
            do {
                _ = try await PostgresDeadline.run(.milliseconds(300), onTimeout: { connection.close().whenComplete { _ in } }) {
                    try await connection.query("SELECT 1", logger: .testing).collect().count
                }
            } catch {
                thrown.failed(error)
            }
            ended.set()
        }
        let finished = eventually(within: 10, every: 0.02) { ended.isSet }
        XCTAssertTrue(finished, "the call was still waiting 10 s after its 300 ms deadline")
        XCTAssertEqual(thrown.state.withLock { $0.failure }, "\(PostgresDeadline.Exceeded(timeout: .milliseconds(300)))")
    }

    /// 64 writers on two lanes, in short bursts (each burst starts with both lanes idle, which
    /// is where a lane's start and another's end meet). A lost wake-up leaves writers waiting
    /// for ever with every connection idle: the test gives up after 30 s instead of hanging.
    func testEveryWriteOnTwoLanesIsAnsweredInOneGaplessHistory() async throws {
        try await checkEveryWriteIsAnswered(lanes: 2)
    }

    private func checkEveryWriteIsAnswered(lanes: Int, file: StaticString = #filePath, line: UInt = #line) async throws {
        let url = try makeDatabase()
        var options = PostgresStoreOptions.testing
        options.commitLanes = lanes
        options.queryTimeout = .seconds(20)
        // Not makeStore: a store whose writers hang would hang its close in the teardown too.
        let store = try PostgresStore(url: url, logger: .testing, options: options)
        try await store.open()
        let writers = 64, bursts = 6, perBurst = 2
        let tally = Tally()
        let work = Task {
            for burst in 0..<bursts {
                await withTaskGroup(of: Void.self) { group in
                    for writer in 0..<writers {
                        group.addTask {
                            for count in 0..<perBurst {
                                do {
                                    let changes = try await store.commit(StoreWrite([set("k\(writer)", "\(burst * perBurst + count)")]))
                                    tally.answered(changes.map(\.revision))
                                } catch {
                                    tally.failed(error)
                                }
                            }
                        }
                    }
                }
            }
        }
        let total = writers * bursts * perBurst
        let finished = eventually(within: 30, every: 0.05) { tally.state.withLock { $0.answered } == total }
        guard finished else {
            // The hung writers (and the store) are left behind: closing would wait for them.
            return XCTFail("\(tally.state.withLock { $0.answered }) of \(total) writes answered on \(lanes) lane(s) after 30 s", file: file, line: line)
        }
        await work.value
        defer { Task { await store.close() } }
        XCTAssertNil(tally.state.withLock { $0.failure }, file: file, line: line)
        let committed = tally.state.withLock { $0.revisions }.sorted()
        XCTAssertEqual(committed, Array(1...UInt64(total)), "every write took one revision, none twice, none skipped", file: file, line: line)
        let history = try await store.changes(after: 0, limit: total + 1)
        XCTAssertEqual(history.map(\.revision), Array(1...UInt64(total)), file: file, line: line)
        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, UInt64(total), file: file, line: line)
    }
}

/// What the writers of ``PostgresCommitLanesTests`` were answered.
private final class Tally: Sendable {
    struct State {
        var answered = 0
        var revisions: [UInt64] = []
        var failure: String?
    }

    let state = Mutex(State())

    func answered(_ revisions: [UInt64]) {
        state.withLock {
            $0.answered += 1
            $0.revisions += revisions
        }
    }

    func failed(_ error: any Error) {
        state.withLock {
            $0.answered += 1
            $0.failure = $0.failure ?? "\(error)"
        }
    }
}
