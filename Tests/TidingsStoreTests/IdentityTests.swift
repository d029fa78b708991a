import Foundation
import TidingsStore
import XCTest

/// The SQLite store's identity and change pages: what an instance checks every read against to
/// notice that the file is not the history it applied (a copy put back, another file).
final class IdentityTests: XCTestCase {
    func testAStoreHasOneIdentityForLifeAndAnotherStoreAnother() async throws {
        let directory = try makeTemporaryDirectory(self)
        let first = try SQLiteStore(directory: directory)
        let identity = try await XCTUnwrapAsync(try await first.loadSnapshot().identity)
        await first.close()
        let reopened = try SQLiteStore(directory: directory)
        let again = try await reopened.loadSnapshot().identity
        await reopened.close()
        XCTAssertEqual(again, identity, "reopening keeps the identity")
        let other = try SQLiteStore(directory: makeTemporaryDirectory(self))
        let otherIdentity = try await other.loadSnapshot().identity
        await other.close()
        XCTAssertNotNil(otherIdentity)
        XCTAssertNotEqual(otherIdentity, identity)
    }

    func testAPageCarriesTheIdentityTheCounterAndTheReadersCommitTime() async throws {
        let store = try SQLiteStore(directory: makeTemporaryDirectory(self))
        let committed = try await store.commit(StoreWrite([.addThing("A"), .addThing("B"), .addThing("C")]))
        let identity = try await store.loadSnapshot().identity
        let page = try await store.changePage(after: 2, limit: 10)
        XCTAssertEqual(page.identity, identity)
        XCTAssertEqual(page.counter, 3)
        XCTAssertEqual(page.committedAtReaderRevision, committed[1].at, "the commit's own answer says the row's time")
        XCTAssertEqual(page.changes.map(\.revision), [3])
        // A reader ahead of the counter (the file went back) gets an answer, not an error...
        let ahead = try await store.changePage(after: 7, limit: 10)
        XCTAssertEqual(ahead.counter, 3)
        XCTAssertEqual(ahead.changes, [])
        XCTAssertNil(ahead.committedAtReaderRevision)
        // ... while the plain read still says "reload".
        do {
            _ = try await store.changes(after: 7, limit: 10)
            XCTFail("a counter below the reader's revision is pruned history")
        } catch StoreError.changesPruned {}
        await store.close()
    }
}

private func XCTUnwrapAsync<T>(_ value: @autoclosure () async throws -> T?) async throws -> T {
    let unwrapped = try await value()
    return try XCTUnwrap(unwrapped)
}
