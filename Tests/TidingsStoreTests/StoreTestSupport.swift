import Foundation
@testable import TidingsStore
import GRDB

/// The tests' shorthand for writes without conditions or declared defaults ("null").
typealias StoreOperation = WriteOperation

extension WriteOperation {
    static func setPreference(key: String, json: String) -> WriteOperation {
        .setPreference(key: key, json: json, defaultJSON: "null")
    }

    static func resetPreference(key: String) -> WriteOperation {
        .setPreference(key: key, json: nil, defaultJSON: "null")
    }
}

extension Change {
    /// What an event needs (revision and kind), without the record's when, who and why.
    var event: Change { Change(revision: revision, kind: kind) }
}

extension SQLiteStore {
    /// Commits `operations` as one unconditional write; the revisions its changes took.
    func commit(_ operations: [WriteOperation]) async throws -> [UInt64] {
        try await commit(StoreWrite(operations)).map(\.revision)
    }

    convenience init(directory: URL, changeRetention: Int) throws {
        try self.init(directory: directory, limits: ChangeStoreLimits(historyCount: changeRetention))
    }
}

extension SQLiteStore {
    /// ``loadSnapshot()`` for assertions' autoclosures: blocks until the read on the store's
    /// own queue is done (it never needs the caller's thread). Without the database's identity
    /// (random), so the contents compare with a literal snapshot; `IdentityTests` check it.
    func syncSnapshot() throws -> StoreSnapshot {
        var snapshot = try writer.queue.sync { try writer.database.read { try $0.readSnapshot() } }
        snapshot.identity = nil
        // When and at which revision an environment was made is the environment tests' concern.
        for name in snapshot.environments.keys {
            snapshot.environments[name]?.createdAt = 0
            snapshot.environments[name]?.revision = 0
        }
        return snapshot
    }
}
