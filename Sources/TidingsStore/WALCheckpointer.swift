import Foundation
internal import GRDB
internal import GRDBSQLite
import Synchronization

/// When the write-ahead log is checkpointed, and by whom (``WALCheckpointer``).
public struct WALCheckpointPolicy: Sendable, Hashable {
    /// Frames appended since the last background checkpoint that start the next one.
    public var backgroundEvery: Int = 1_000
    /// Frames in the log at which the writer checkpoints what is left itself, so that the log
    /// restarts from its beginning: the bound on the log (about 4 KiB per frame).
    public var restartAt: Int = 8_000

    public init(backgroundEvery: Int = 1_000, restartAt: Int = 8_000) {
        self.backgroundEvery = max(1, backgroundEvery)
        self.restartAt = max(self.backgroundEvery, restartAt)
    }
}

/// Checkpoints the SQLite write-ahead log off the writer's queue.
///
/// SQLite's own auto-checkpoint runs on the connection that committed, right after its
/// commit: every 1,000 frames the writer copied the log's pages into the database file and
/// fsynced it before it could start the next batch, and on a machine whose disk is busy that
/// fsync can take far longer than a commit's — every caller queued behind the writer waited
/// for it. Here the writer's connection has a WAL hook instead (which replaces the
/// auto-checkpoint): each commit reports the log's length, and every `backgroundEvery` frames a
/// PASSIVE checkpoint runs on this object's own connection and queue — it copies and fsyncs
/// while the writer goes on committing. A PASSIVE checkpoint never waits for the writer, so
/// under a steady load it can never finish the log's tail, and the log only restarts from its
/// beginning once every frame is in the database: at `restartAt` frames the writer checkpoints
/// itself (SQLite's behaviour, now 8 times rarer and with only the frames since the last
/// background pass left to copy), which also bounds the log if the background one falls
/// behind or another process's readers hold it.
final class WALCheckpointer: @unchecked Sendable {
    /// The checkpointing connection, used only on `queue`.
    private let database: DatabaseQueue
    /// Internal so tests can suspend it, holding every background checkpoint.
    let queue = DispatchQueue(label: "tidings.store.checkpoint", qos: .utility)
    let policy: WALCheckpointPolicy

    private struct State {
        /// The log's length when the last background checkpoint was asked for.
        var requestedAt = 0
        var scheduled = false
        var closed = false
        var counters = WALCheckpointStatistics()
    }

    private let state = Mutex(State())

    init(path: String, policy: WALCheckpointPolicy) throws {
        var configuration = Configuration()
        configuration.label = "tidings.store.checkpoint"
        self.database = try DatabaseQueue(path: path, configuration: configuration)
        self.policy = policy
    }

    /// Installs the hook on the writer's connection (replacing SQLite's auto-checkpoint there).
    /// The writer keeps this object alive as long as its connection.
    func install(on writer: Database) {
        sqlite3_wal_hook(writer.sqliteConnection, { context, connection, schema, frames in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<WALCheckpointer>.fromOpaque(context).takeUnretainedValue()
            checkpointer.committed(frames: Int(frames), connection: connection, schema: schema)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Called on the writer's thread after each commit with the log's length in frames.
    private func committed(frames: Int, connection: OpaquePointer?, schema: UnsafePointer<CChar>?) {
        if frames >= policy.restartAt {
            // The writer finishes the job: a PASSIVE checkpoint of what the background ones
            // left (it never waits for readers), after which the next write restarts the log.
            var logFrames: Int32 = 0
            var copied: Int32 = 0
            let code = sqlite3_wal_checkpoint_v2(connection, schema, SQLITE_CHECKPOINT_PASSIVE, &logFrames, &copied)
            state.withLock { state in
                state.requestedAt = 0
                if code == SQLITE_OK { state.counters.byWriter += 1 }
            }
            return
        }
        let schedule: Bool = state.withLock { state in
            if frames < state.requestedAt { state.requestedAt = 0 }  // the log restarted
            guard !state.closed, !state.scheduled, frames - state.requestedAt >= policy.backgroundEvery else { return false }
            state.requestedAt = frames
            state.scheduled = true
            return true
        }
        if schedule { queue.async { self.checkpointInBackground() } }
    }

    private func checkpointInBackground() {
        let closed = state.withLock { state in
            state.scheduled = false
            return state.closed
        }
        guard !closed else { return }
        // SQLITE_BUSY (another process is checkpointing) or an I/O error: the next request
        // tries again, and the writer's checkpoint at `restartAt` still bounds the log.
        let done = (try? database.inDatabase { try $0.checkpoint(.passive) }) != nil
        if done { state.withLock { $0.counters.inBackground += 1 } }
    }

    /// Checkpoints done so far.
    var statistics: WALCheckpointStatistics { state.withLock { $0.counters } }

    /// Stops checkpointing and closes the connection (after any checkpoint under way).
    func close() {
        state.withLock { $0.closed = true }
        queue.sync { try? database.close() }
    }
}

/// Checkpoints of a ``SQLiteStore``'s write-ahead log since it opened.
public struct WALCheckpointStatistics: Sendable, Hashable {
    /// PASSIVE checkpoints run on the checkpointer's own connection, beside the writer.
    public var inBackground: UInt64 = 0
    /// Checkpoints the writer ran itself when the log reached its bound.
    public var byWriter: UInt64 = 0
}
