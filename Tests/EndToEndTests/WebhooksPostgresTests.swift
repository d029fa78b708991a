import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Webhooks from several instances on one PostgreSQL: each hook is delivered by one instance at
/// a time (its lease in the store), from the one durable cursor, so no change is sent twice at
/// the same time and none is lost — also when the instance delivering stops.
final class WebhooksPostgresTests: XCTestCase {
    func test_two_instances_deliver_every_change_once_at_a_time_and_lose_none() throws {
        let cluster = try PostgresCluster()
        addTeardownBlock { cluster.destroy() }
        let receiver = try WebhookReceiver()
        addTeardownBlock { receiver.stop() }
        // Each delivery takes a while, so a second instance delivering at the same time would show.
        try receiver.script("shared", [], delay: 0.03)
        let file = try receiver.file([(name: "shared", extra: [:])])
        func instance() throws -> TidingsProcess {
            // The lease 5 s, not the fast clocks' 2 s: it is renewed with less than min(attempt
            // timeout + 2 s, 60 %) left, so with a 1 s attempt the slack is 2 s, as with the
            // defaults (30 s lease, 10 s attempt). At 2 s the slack was 0.2 s, and a delivery
            // stalled that long on a loaded machine ran past its lease.
            let process = try TidingsProcess(arguments: ["--database-url", cluster.url, "--webhooks", file.path, "--webhook-allow-private"],
                                             environment: WebhooksTests.fastClocks.merging(["TIDINGS_TEST_WEBHOOK_LEASE": "5"]) { $1 })
            addTeardownBlock { process.stop() }
            return process
        }
        let a = try instance(), b = try instance()
        var revisions: [Int] = []
        for round in 0..<20 {
            let through = round % 2 == 0 ? a : b
            revisions.append(try XCTUnwrap(through.put("age", round).value?["revision"]?.intValue))
        }
        XCTAssertTrue(try eventually(within: 20) { try receiver.delivered("shared").count >= 5 })
        // The instance that holds the lease stops (and gives it up); the other goes on from the cursor.
        XCTAssertEqual(a.stop(), 0)
        for round in 20..<40 { revisions.append(try XCTUnwrap(b.put("age", round).value?["revision"]?.intValue)) }

        XCTAssertTrue(try eventually(within: 30) { Set(try receiver.delivered("shared").compactMap(\.revision)).isSuperset(of: revisions) },
                      "missing: \(Set(revisions).subtracting((try? receiver.delivered("shared").compactMap(\.revision)) ?? []).sorted()); B:\n\(b.log)")
        XCTAssertEqual(try receiver.maxInFlight("shared"), 1, "two deliveries of the hook were open at once")
        let order = try receiver.delivered("shared").compactMap(\.revision)
        var firstSeen: [Int] = []
        for revision in order where !firstSeen.contains(revision) { firstSeen.append(revision) }
        XCTAssertEqual(firstSeen, revisions, "in revision order")
        XCTAssertLessThanOrEqual(order.count - revisions.count, 1, "at most the delivery under way at the stop is repeated")
        XCTAssertTrue(try receiver.attempts("shared").allSatisfy(\.verified))
        let status = try b.get("/webhooks").value?["webhooks"]?[0]
        XCTAssertEqual(status?["lastDelivered"]?.intValue, revisions.last)
        XCTAssertEqual(status?["backlog"]?.intValue, 0)
    }
}
