import Foundation
internal import GRDB
import Synchronization

/// Cluster-wide leases on the shared file: each take and release is one IMMEDIATE transaction
/// (the write lock first), so what a take found and what it wrote are one step against every
/// other process. The clock is this machine's (processes sharing a file share it).
extension SQLiteStore {
    public func takeLease(_ name: String, holder: String, duration: Duration) async throws -> LeaseTake {
        let seconds = Self.seconds(duration)
        let grace = Self.seconds(LeasePurge.grace)
        return try await leaseWrite { db in
            let now = Date().timeIntervalSince1970
            // A row expired long ago is as good as none, and single-use names (stream tickets'
            // `ticket:<nonce>`) would otherwise pile up: a few are purged with every take. Not
            // this name's row, and none expired within the grace: a row another holder left
            // when it died is what tells a take-over apart from a free lease.
            try db.execute(sql: """
                DELETE FROM lease WHERE name IN
                  (SELECT name FROM lease WHERE expires < ? AND name <> ? LIMIT \(LeasePurge.batch))
                """, arguments: [now - grace, name])
            let found = try Row.fetchOne(db, sql: "SELECT holder, expires FROM lease WHERE name = ?", arguments: [name])
            let take: LeaseTake
            if let found {
                let other: String = found["holder"]
                let expires: Double = found["expires"]
                if other == holder {
                    take = .taken
                } else if expires < now {
                    take = .takenOver
                } else {
                    return .refused
                }
            } else {
                take = .taken
            }
            try db.execute(sql: """
                INSERT INTO lease (name, holder, expires) VALUES (?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
                """, arguments: [name, holder, now + seconds])
            return take
        }
    }

    public func releaseLease(_ name: String, holder: String) async throws {
        try await leaseWrite { db in
            try db.execute(sql: "DELETE FROM lease WHERE name = ? AND holder = ?", arguments: [name, holder])
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    /// One IMMEDIATE transaction on the writer's queue, off the caller's thread.
    private func leaseWrite<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            writer.queue.async { [self, writer] in
                do {
                    guard !isClosed.load(ordering: .acquiring) else { throw StoreError.closed }
                    let result = try writer.database.writeWithoutTransaction { db -> T in
                        var result: T?
                        try db.inTransaction(.immediate) {
                            result = try body(db)
                            return .commit
                        }
                        return result!
                    }
                    continuation.resume(returning: result)
                } catch {
                    continuation.resume(throwing: StoreWriter.storeError(error))
                }
            }
        }
    }
}
