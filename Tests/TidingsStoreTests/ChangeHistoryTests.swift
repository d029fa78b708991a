import Foundation
import XCTest
@testable import TidingsStore

/// Several processes opening one data directory at once (the start-up lock). What every
/// ``ChangeStore`` must do with its change table is checked by ``SQLiteConformanceTests``.
final class ChangeHistoryTests: XCTestCase {
    func testSeveralProcessesOpeningAnEmptyDirectoryAtOnceAllSucceed() async throws {
        for _ in 0..<5 {
            let dir = makeTemporaryDirectory(self)
            let stores = try await withThrowingTaskGroup(of: SQLiteStore.self) { group in
                for _ in 0..<4 { group.addTask { try SQLiteStore(directory: dir) } }
                var all: [SQLiteStore] = []
                for try await store in group { all.append(store) }
                return all
            }
            XCTAssertEqual(stores.count, 4)
            for store in stores { await store.close() }
        }
    }
}
