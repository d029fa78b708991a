import Foundation
import XCTest
@testable import TidingsStore

/// The write-ahead log is checkpointed beside the writer (``WALCheckpointer``), not by it after
/// its commits: SQLite's auto-checkpoint made the writer copy and fsync the database file every
/// 1,000 frames while every caller waited behind it. Each test holds the background checkpointer
/// (its queue suspended) and reads what the writer did from the log file's length: SQLite reuses
/// the file from its start once the log restarts, so the file is as long as the log ever got.
final class WALCheckpointTests: XCTestCase {
    private static let frameBytes = 4_096 + 24   // a page and its frame header
    /// ~20 KB values: each commit appends a dozen frames or more (value, before, indexes).
    private static let large = [#""\#(String(repeating: "a", count: 20_000))""#, #""\#(String(repeating: "b", count: 20_000))""#]

    private func logFrames(_ directory: URL) -> Int {
        let path = directory.appendingPathComponent(SQLiteStore.fileName + "-wal").path
        let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        return max(0, bytes - 32) / Self.frameBytes
    }

    /// Commits one large value after another until the log has `frames` frames or `limit` commits.
    private func fill(_ store: SQLiteStore, _ directory: URL, frames: Int, limit: Int) async throws -> Int {
        var commits = 0
        while logFrames(directory) < frames && commits < limit {
            _ = try await store.commit([.setPreference(key: "big", json: Self.large[commits % 2])])
            commits += 1
        }
        return commits
    }

    /// With the background checkpointer held, commits go on and the log grows past SQLite's
    /// 1,000-frame auto-checkpoint: the writer no longer checkpoints there (before, it copied
    /// and fsynced at 1,000 frames, the log restarted, and the file never grew much past it).
    /// Released, the checkpointer catches up, and the data is all there after reopening.
    func testTheWriterLeavesCheckpointsToTheCheckpointer() async throws {
        let directory = makeTemporaryDirectory(self)
        var store = try SQLiteStore(directory: directory, checkpoints: WALCheckpointPolicy(backgroundEvery: 100, restartAt: 100_000))
        store.writer.checkpointer.queue.suspend()
        let commits = try await fill(store, directory, frames: 1_600, limit: 1_000)
        XCTAssertGreaterThanOrEqual(logFrames(directory), 1_600, "after \(commits) commits the log restarted: the writer checkpointed")
        XCTAssertEqual(store.checkpointStatistics, WALCheckpointStatistics(), "nothing checkpointed while the checkpointer is held")

        store.writer.checkpointer.queue.resume()
        await waitUntil("a background checkpoint") { store.checkpointStatistics.inBackground >= 1 }
        XCTAssertEqual(store.checkpointStatistics.byWriter, 0)
        await store.close()
        store = try SQLiteStore(directory: directory)
        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, UInt64(commits))
        XCTAssertEqual(snapshot.preferences["big"]?.json, Self.large[(commits - 1) % 2])
        await store.close()
    }

    /// The log stays bounded when background checkpoints cannot keep up (here: held): at
    /// `restartAt` frames the writer checkpoints itself, and the log restarts from its start.
    func testTheWriterBoundsTheLogWhenTheCheckpointerFallsBehind() async throws {
        let directory = makeTemporaryDirectory(self)
        let store = try SQLiteStore(directory: directory, checkpoints: WALCheckpointPolicy(backgroundEvery: 50, restartAt: 200))
        store.writer.checkpointer.queue.suspend()
        var commits = 0
        while store.checkpointStatistics.byWriter < 3 && commits < 1_000 {
            _ = try await store.commit([.setPreference(key: "big", json: Self.large[commits % 2])])
            commits += 1
        }
        XCTAssertGreaterThanOrEqual(store.checkpointStatistics.byWriter, 3, "the writer never checkpointed in \(commits) commits")
        // The bound plus the one commit that crossed it (a few dozen frames at most).
        XCTAssertLessThan(logFrames(directory), 200 + 100, "the log grew past its bound")
        store.writer.checkpointer.queue.resume()
        await store.close()
    }
}
