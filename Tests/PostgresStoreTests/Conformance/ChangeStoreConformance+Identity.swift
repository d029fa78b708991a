import Foundation
import XCTest
@testable import TidingsStore

/// Which history a database is: its identity, and the change page that carries it with the
/// counter and the commit time at the reader's revision (``ChangePage``), so an instance can
/// tell a re-created, replaced or restored database from the one it applied.
extension ChangeStoreConformance {
    /// One identity per database for life: the same through every instance and after
    /// reopening; another database has another.
    static func aDatabaseKeepsOneIdentity(_ maker: some ChangeStoreMaker) async throws {
        let database = try maker.newDatabase()
        let first = try await maker.open(database, limits: ChangeStoreLimits())
        let identity = try await first.loadSnapshot().identity
        XCTAssertNotNil(identity, "every database has an identity from its creation")
        let second = try await maker.open(database, limits: ChangeStoreLimits())
        _ = try await second.commit([set("k", "1")])
        let seenBySecond = try await second.loadSnapshot().identity
        XCTAssertEqual(seenBySecond, identity, "every instance sees the one identity")
        await first.close()
        await second.close()
        let reopened = try await maker.open(database, limits: ChangeStoreLimits())
        let again = try await reopened.loadSnapshot()
        XCTAssertEqual(again.identity, identity, "reopening keeps it")
        XCTAssertEqual(again.revision, 1)
        let page = try await reopened.changePage(after: 0, limit: 10)
        XCTAssertEqual(page.identity, identity, "a page carries the same identity as the snapshot")
        let other = try await maker.freshStore()
        let otherIdentity = try await other.loadSnapshot().identity
        XCTAssertNotNil(otherIdentity)
        XCTAssertNotEqual(otherIdentity, identity, "another database, another identity")
    }

    /// A page: the identity, the counter, the commit time of the reader's own revision and the
    /// changes after it; a reader ahead of the counter gets an answer with no changes (while
    /// ``ChangeStore/changes(after:limit:)`` says reload); one behind the pruned rows is told so.
    static func aChangePageSaysWhichHistoryItIs(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore(limits: ChangeStoreLimits(historyCount: 4))
        let committed = try await store.commit([.addThing("A"), .addThing("B"), .addThing("C")])
        let identity = try await store.loadSnapshot().identity
        var page = try await store.changePage(after: 2, limit: 10)
        XCTAssertEqual(page, ChangePage(identity: identity, counter: 3, committedAtReaderRevision: committed[1].at,
                                        changes: [committed[2]]))
        page = try await store.changePage(after: 0, limit: 2)
        XCTAssertEqual(page, ChangePage(identity: identity, counter: 3, committedAtReaderRevision: nil,
                                        changes: Array(committed.prefix(2))))
        page = try await store.changePage(after: 3, limit: 10)
        XCTAssertEqual(page, ChangePage(identity: identity, counter: 3, committedAtReaderRevision: committed[2].at, changes: []))
        page = try await store.changePage(after: 7, limit: 10)
        XCTAssertEqual(page, ChangePage(identity: identity, counter: 3, committedAtReaderRevision: nil, changes: []),
                       "a reader ahead of the counter")
        let plain = await storeError { try await store.changes(after: 7, limit: 10) }
        XCTAssertEqual(plain, .changesPruned(oldestAvailable: 4))

        for value in 1...5 { _ = try await store.commit([set("k", "\(value)")]) }  // 4...8; rows 5...8 kept
        let behind = await storeError { try await store.changePage(after: 2, limit: 10) }
        XCTAssertEqual(behind, .changesPruned(oldestAvailable: 5))
        page = try await store.changePage(after: 4, limit: 10)
        XCTAssertEqual(page.counter, 8)
        XCTAssertNil(page.committedAtReaderRevision, "the row at the reader's revision is pruned")
        XCTAssertEqual(page.changes.map(\.revision), [5, 6, 7, 8])
    }
}
