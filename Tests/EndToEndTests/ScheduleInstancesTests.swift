import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Schedules with two instances on one PostgreSQL, end to end: both look for due schedules,
/// each schedule is applied exactly once (one change per schedule in the history) in the
/// environment it was made in, and a schedule made through one instance is seen through the other.
/// An instance that says a schedule is `applied` shows its change, whichever instance applied it.
final class ScheduleInstancesTests: XCTestCase {
    /// The schedule's state comes from the store, where it is as soon as the write commits; the
    /// values come from memory, which the applying instance updates a moment later and the other
    /// one when its change feed next reads the store (SQLite: every 100 ms). An instance must not
    /// say `applied` before it shows the change.
    func test_an_instance_that_says_applied_shows_the_change_whichever_instance_applied_it() throws {
        let directory = try TemporaryDirectory()
        let a = try TidingsProcess(dataDirectory: directory.url)
        addTeardownBlock { a.stop() }
        let b = try TidingsProcess(dataDirectory: directory.url)
        addTeardownBlock { b.stop() }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        // Three schedules a quarter of a second apart, each read through both instances.
        var pending: [(id: String, age: Int, instance: TidingsProcess, name: String)] = []
        for index in 0..<3 {
            let at = formatter.string(from: Date().addingTimeInterval(1.2 + 0.25 * Double(index)))
            let reply = try a.request("POST", "/schedules", json: ["at": at, "preferences": ["age": 40 + index]])
            XCTAssertEqual(reply.status, 201, reply.text)
            let id = try XCTUnwrap(reply.value?["id"]?.stringValue)
            pending += [(id, 40 + index, a, "A"), (id, 40 + index, b, "B")]
        }
        let deadline = Date().addingTimeInterval(10)
        while !pending.isEmpty, Date() < deadline {
            for (index, read) in pending.enumerated().reversed() {
                guard try read.instance.get("/schedules/\(read.id)").value?["state"] == "applied" else { continue }
                // At once, through the same instance: it said applied, so it shows the change.
                let age = try read.instance.get("/preferences/age").value?["value"]?.intValue ?? 0
                XCTAssertGreaterThanOrEqual(age, read.age, "schedule \(read.id) applied, read through \(read.name)")
                pending.remove(at: index)
            }
        }
        XCTAssertEqual(pending.map(\.id), [], "not applied within 10 s")
    }

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
