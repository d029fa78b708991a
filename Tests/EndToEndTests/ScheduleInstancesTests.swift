import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Schedules with two instances on one PostgreSQL, end to end: both look for due schedules,
/// each schedule is applied exactly once (one change per schedule in the history), and a
/// schedule made through one instance is seen through the other.
final class ScheduleInstancesTests: XCTestCase {
    func test_two_instances_on_PostgreSQL_apply_each_schedule_once() throws {
        let cluster = try PostgresCluster()
        addTeardownBlock { cluster.destroy() }
        let a = try TidingsProcess(arguments: ["--database-url", cluster.url])
        addTeardownBlock { a.stop() }
        let b = try TidingsProcess(arguments: ["--database-url", cluster.url])
        addTeardownBlock { b.stop() }

        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let at = formatter.string(from: Date().addingTimeInterval(2))
        var ids: [String] = []
        for index in 0..<6 {
            let through = index.isMultiple(of: 2) ? a : b
            let reply = try through.request("POST", "/schedules", json: ["at": at, "preferences": ["age": 100 + index]])
            XCTAssertEqual(reply.status, 201, reply.text)
            ids.append(try XCTUnwrap(reply.value?["id"]?.stringValue))
        }
        XCTAssertEqual(try b.get("/schedules/\(ids[0])").value?["state"], "pending", "made through A, read through B")
        XCTAssertTrue(eventually(within: 10) {
            let pending = try? a.get("/schedules?state=applied").value?["schedules"]?.arrayValue?.count
            return pending == ids.count
        })
        let history = try XCTUnwrap(a.get("/history?limit=100").value?["changes"]?.arrayValue)
        for id in ids {
            XCTAssertEqual(history.filter { $0["reason"]?.stringValue == "scheduled \(id)" }.count, 1, "schedule \(id)")
        }
        XCTAssertEqual(history.count, ids.count)
        XCTAssertTrue(eventually { (try? b.currentRevision()) == UInt64(ids.count) })
    }
}
