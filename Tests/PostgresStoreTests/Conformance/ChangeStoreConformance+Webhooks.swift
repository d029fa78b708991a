import Foundation
import XCTest
@testable import TidingsStore

/// What a webhook's reader asks of the store: history pages across the environments a hook
/// covers, in one revision order (``HistoryQuery/environments``), and its backlog counted over
/// the same coverage (``WebhookOutboxStore/countChanges(after:covered:)``).
extension ChangeStoreConformance {
    static func historyReadsAcrossEnvironmentsForWebhooks(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        _ = try await store.commit(StoreWrite([.createEnvironment(copiedFrom: nil, limit: 64)], environment: "staging"))
        _ = try await store.commit(StoreWrite([.createEnvironment(copiedFrom: nil, limit: 64)], environment: "dev"))
        _ = try await store.commit(StoreWrite([set("age", "1")], environment: "staging"))      // 3
        _ = try await store.commit(StoreWrite([set("age", "2")]))                               // 4
        _ = try await store.commit(StoreWrite([.addThing("X")], environment: "dev"))            // 5
        _ = try await store.commit(StoreWrite([set("name", "3")], environment: "staging"))     // 6
        _ = try await store.commit(StoreWrite([.setPosts("{}")]))                               // 7: no record

        func revisions(_ environments: HistoryQuery.EnvironmentSelection?, keys: [String]? = nil, after: UInt64 = 0) async throws -> [UInt64] {
            try await store.history(HistoryQuery(direction: .oldestFirst(after: after), limit: 100, keys: keys,
                                                 environments: environments)).map(\.revision)
        }
        let every = try await revisions(.every)
        XCTAssertEqual(every, [3, 4, 5, 6], "every environment's records, in one order; no environment or posts rows")
        let some = try await revisions(.named(["staging", "dev"]))
        XCTAssertEqual(some, [3, 5, 6])
        let none = try await revisions(.named([]))
        XCTAssertEqual(none, [])
        let byKey = try await revisions(.named(["staging"]), keys: ["age"])
        XCTAssertEqual(byKey, [3])
        let later = try await revisions(.every, after: 4)
        XCTAssertEqual(later, [5, 6])
        let alone = try await revisions(nil)
        XCTAssertEqual(alone, [4], "without a selection: the query's one environment")

        let outbox = try XCTUnwrap(store as? any WebhookOutboxProvider).webhookOutbox()
        let all = try await outbox.countChanges(after: 0, covered: WebhookCoverage())
        XCTAssertEqual(all, 4)
        let staging = try await outbox.countChanges(after: 0, covered: WebhookCoverage(environments: ["staging"]))
        XCTAssertEqual(staging, 2)
        let stagingThings = try await outbox.countChanges(after: 0, covered: WebhookCoverage(preferences: false, environments: ["staging", "dev"]))
        XCTAssertEqual(stagingThings, 1)
        let afterFour = try await outbox.countChanges(after: 4, covered: WebhookCoverage(environments: ["default"]))
        XCTAssertEqual(afterFour, 0)
        await outbox.closeOutbox()
    }
}
