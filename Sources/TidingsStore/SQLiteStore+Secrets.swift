import Foundation
import Synchronization
internal import GRDB

/// Server secrets in the SQLite file (``ServerSecretStore``): the row is made if missing and read
/// back in one write transaction, so of several processes starting on one file at once the first
/// makes it and every one reads the same.
extension SQLiteStore: ServerSecretStore {
    public func streamTicketSecret() async throws -> [UInt8] {
        let fresh = Hex.string(ServerSecret.random())
        let stored: String? = try await withCheckedThrowingContinuation { continuation in
            writer.queue.async { [self, writer] in
                do {
                    guard !isClosed.load(ordering: .acquiring) else { throw StoreError.closed }
                    let value = try writer.database.write { db -> String? in
                        try db.execute(sql: "INSERT INTO server_secret (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                                       arguments: [ServerSecret.streamTickets, fresh])
                        return try String.fetchOne(db, sql: "SELECT value FROM server_secret WHERE name = ?",
                                                   arguments: [ServerSecret.streamTickets])
                    }
                    continuation.resume(returning: value)
                } catch {
                    continuation.resume(throwing: StoreWriter.storeError(error))
                }
            }
        }
        guard let stored, let bytes = ServerSecret.bytes(hex: stored) else {
            throw StoreError.database("the stored stream ticket secret is not \(ServerSecret.byteCount) bytes in hex")
        }
        return bytes
    }
}
