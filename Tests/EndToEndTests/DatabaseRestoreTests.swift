import Foundation
import TestFixtures
import XCTest

/// The database goes back (restored from a backup, a failover that lost commits): every
/// instance notices the counter below what it applied, rebuilds memory from the database and
/// sends its streams `reset`. Before, both kept serving their newer memory, and a write
/// acknowledged after the restore never reached memory or streams until a restart.
final class DatabaseRestoreTests: XCTestCase {
    private static let tables = ["meta", "preference", "thing", "posts", "change", "checkpoint", "history_base"]

    func test_a_restore_of_an_older_database_under_two_instances_reloads_both_and_resets_streams() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let a = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { a.stop() }
        let b = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { b.stop() }

        XCTAssertEqual(try a.put("age", 12).status, 200)
        let backedUp = try a.currentRevision()
        // The backup: a copy of every table at this revision.
        _ = try cluster.psql(Self.tables.map { "CREATE TABLE backup_\($0) AS TABLE \($0);" }.joined(separator: " "))
        for value in 13..<33 { XCTAssertEqual(try a.put("age", value).status, 200) }
        let newer = try a.currentRevision()
        XCTAssertTrue(eventually(within: 5) { (try? b.currentRevision()) == newer })
        let stream = try b.openEventStream("/preferences/age/events")
        XCTAssertEqual(try stream.nextEvent().value?["value"], 32)

        // The restore.
        _ = try cluster.psql("BEGIN; " + Self.tables.map { "DELETE FROM \($0); INSERT INTO \($0) SELECT * FROM backup_\($0);" }
            .joined(separator: " ") + " COMMIT;")

        // A write through A is answered with what the database now holds, and memory follows.
        let put = try a.put("age", 4242)
        XCTAssertEqual(put.status, 200, put.text)
        XCTAssertEqual(put.value?["value"], 4242)
        XCTAssertEqual(put.value?["revision"]?.intValue, Int(backedUp) + 1)
        let onA = try a.get("/preferences/age")
        XCTAssertEqual(onA.value?["value"], 4242)
        XCTAssertEqual(onA.revisionHeader, backedUp + 1)
        // B notices too (the write's notification makes it read; its counter is below B's).
        XCTAssertTrue(eventually(within: 5) { (try? b.get("/preferences/age").value?["value"]) == 4242 },
                      "B still shows \(String(describing: try? b.get("/preferences/age").text))")
        XCTAssertEqual(try b.currentRevision(), backedUp + 1)
        // B's stream was told to start over, then shows the database's value.
        var names: [String] = []
        var last: EventStreamReader.Event?
        while last?.value?["value"] != 4242 {
            let event = try stream.nextEvent(timeout: 5)
            names.append(event.name ?? "message")
            last = event
        }
        XCTAssertTrue(names.contains("reset"), "events after the restore: \(names)")
        // And both go on from there.
        XCTAssertEqual(try b.put("age", 7).value?["revision"]?.intValue, Int(backedUp) + 2)
        XCTAssertTrue(eventually(within: 5) { (try? a.get("/preferences/age").value?["value"]) == 7 })
    }
}
