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

    /// An instance stopped while a delivery is open at the receiver cuts it off, but the receiver
    /// may go on handling what it read (this one sleeps 0.8 s before answering and never looks at
    /// the connection). The stopping instance keeps the lease a second longer, so the other
    /// instance's first delivery starts after that one ended. (Given up at once, the other
    /// instance, which looks every lease / 3 = 0.47 s, took over inside the 0.8 s.)
    func test_a_delivery_cut_off_by_a_stop_does_not_overlap_the_next_instances() throws {
        let cluster = try PostgresCluster()
        addTeardownBlock { cluster.destroy() }
        let receiver = try WebhookReceiver()
        addTeardownBlock { receiver.stop() }
        try receiver.script("slow", [], delay: 0.8)
        let file = try receiver.file([(name: "slow", extra: [:])])
        // A 1.4 s lease: renewed with less than 0.84 s left, so a 0.8 s delivery stays within it.
        let clocks = WebhooksTests.fastClocks.merging(["TIDINGS_TEST_WEBHOOK_LEASE": "1.4", "TIDINGS_TEST_WEBHOOK_TIMEOUT": "2"]) { $1 }
        func instance() throws -> TidingsProcess {
            let process = try TidingsProcess(arguments: ["--database-url", cluster.url, "--webhooks", file.path, "--webhook-allow-private"],
                                             environment: clocks)
            addTeardownBlock { process.stop() }
            return process
        }
        let a = try instance()
        let first = try XCTUnwrap(a.put("age", 1).value?["revision"]?.intValue)
        XCTAssertTrue(try eventually(within: 20) { try receiver.delivered("slow").count == 1 }, "A delivers while alone")
        let b = try instance()
        let second = try XCTUnwrap(b.put("age", 2).value?["revision"]?.intValue)
        // A holds the lease: once the delivery is open at the receiver, A stops.
        XCTAssertTrue(try eventually(within: 20) { try receiver.inFlight("slow") == 1 }, "a delivery opens")
        XCTAssertEqual(a.stop(), 0)
        let third = try XCTUnwrap(b.put("age", 3).value?["revision"]?.intValue)
        XCTAssertTrue(try eventually(within: 30) {
            Set(try receiver.delivered("slow").compactMap(\.revision)).isSuperset(of: [first, second, third])
        }, "B goes on from the cursor")
        XCTAssertEqual(try receiver.maxInFlight("slow"), 1, "the cut-off delivery and B's overlapped at the receiver")
    }
}
