import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Schedules with two instances on one PostgreSQL, end to end: both look for due schedules,
/// each schedule is applied exactly once (one change per schedule in the history) in the
/// environment it was made in, and a schedule made through one instance is seen through the other.
final class ScheduleInstancesTests: XCTestCase {
    func test_two_instances_on_PostgreSQL_apply_each_schedule_once() throws {
        let cluster = try PostgresCluster()
        addTeardownBlock { cluster.destroy() }
        let a = try TidingsProcess(arguments: ["--database-url", cluster.url])
        addTeardownBlock { a.stop() }
        let b = try TidingsProcess(arguments: ["--database-url", cluster.url])
        addTeardownBlock { b.stop() }

        // Half of them in another environment, made through either instance.
        XCTAssertEqual(try a.request("PUT", "/environments/staging").status, 201)
        XCTAssertTrue(eventually { (try? b.get("/environments/staging").status) == 200 })
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let at = formatter.string(from: Date().addingTimeInterval(2))
        var ids: [(id: String, prefix: String)] = []
        for index in 0..<6 {
            let through = index.isMultiple(of: 2) ? a : b
            let prefix = index % 3 == 0 ? "/environments/staging" : ""
            let reply = try through.request("POST", prefix + "/schedules", json: ["at": at, "preferences": ["age": 100 + index]])
            XCTAssertEqual(reply.status, 201, reply.text)
            ids.append((try XCTUnwrap(reply.value?["id"]?.stringValue), prefix))
        }
        XCTAssertEqual(try b.get("/schedules/\(ids[1].id)").value?["state"], "pending", "made through B, read through B")
        XCTAssertEqual(try b.get("/environments/staging/schedules/\(ids[0].id)").value?["state"], "pending", "made through A, read through B")
        XCTAssertTrue(eventually(within: 10) {
            let applied = ["", "/environments/staging"].map {
                (try? a.get($0 + "/schedules?state=applied").value?["schedules"]?.arrayValue?.count) ?? 0
            }
            return applied == [4, 2]
        })
        for prefix in ["", "/environments/staging"] {
            let history = try XCTUnwrap(a.get(prefix + "/history?limit=100").value?["changes"]?.arrayValue)
            let made = ids.filter { $0.prefix == prefix }
            for (id, _) in made {
                XCTAssertEqual(history.filter { $0["reason"]?.stringValue == "scheduled \(id)" }.count, 1, "schedule \(id)")
            }
            XCTAssertEqual(history.count, made.count, prefix)
        }
        // Six schedules' writes and the environment's creation, nothing more.
        XCTAssertTrue(eventually { (try? b.currentRevision()) == UInt64(ids.count + 1) })
    }
}
