import Foundation
import Synchronization
import XCTest
@testable import TidingsStore

/// Opens the stores a conformance check runs against: fresh empty databases, and more than one
/// instance on the same database (what several processes or machines sharing it see).
///
/// Each runner (``SQLiteConformanceTests``, ``PostgresConformanceTests``) is one, and closes
/// every store it opened when the test ends.
protocol ChangeStoreMaker: AnyObject {
    /// A new, empty database; the value names it for ``open(_:limits:)``.
    func newDatabase() throws -> String
    /// An opened store on `database` with `limits`.
    func open(_ database: String, limits: ChangeStoreLimits) async throws -> any ChangeStore
}

extension ChangeStoreMaker {
    /// An opened store on a new, empty database.
    func freshStore(limits: ChangeStoreLimits = ChangeStoreLimits()) async throws -> any ChangeStore {
        try await open(try newDatabase(), limits: limits)
    }
}

/// The rules every ``ChangeStore`` keeps (its protocol's documentation), written once and run
/// against SQLite and PostgreSQL, so the two stores cannot drift apart unnoticed: where they
/// disagree, one of them is wrong. Each check is a static function taking the store maker; the
/// runners call each one from a test method of their own (XCTest on Linux does not discover
/// inherited test methods). The checks are split by subject over the `ChangeStoreConformance+*`
/// files.
enum ChangeStoreConformance {}

/// Commits of the conformance checks, shorter to write.
extension ChangeStore {
    /// Commits `operations` as one unconditional write.
    func commit(_ operations: [WriteOperation], actor: String = "", reason: String? = nil) async throws -> [Change] {
        try await commit(StoreWrite(operations, actor: actor, reason: reason))
    }

    /// Commits `write` with a global `If-Match` of `revisions`.
    func commit(_ operations: [WriteOperation], ifGlobalRevisionIn revisions: Set<UInt64>) async throws -> [Change] {
        var write = StoreWrite(operations)
        write.expectedGlobalRevisions = revisions
        return try await commit(write)
    }
}

/// Collects what a store's doorbell led to: each ring reads ``ChangeStore/changes(after:limit:)``
/// from the start, so a revision showing up in ``seen`` proves a ring came after its commit
/// (the reader reads nothing on its own).
final class DoorbellReader: Sendable {
    private let revisions = Mutex<Set<UInt64>>([])

    /// Starts listening to `store`'s doorbell.
    init(_ store: any ChangeStore) {
        store.watch { [weak self, store] in
            guard let self else { return }
            Task {
                guard let changes = try? await store.changes(after: 0, limit: 10_000) else { return }
                self.revisions.withLock { $0.formUnion(changes.map(\.revision)) }
            }
        }
    }

    /// Every revision a read after a ring found.
    var seen: Set<UInt64> { revisions.withLock { $0 } }
}
