import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// The database goes back or is replaced under running instances: restored from an older
/// `pg_dump`, or dropped and created again empty. Every instance notices at its next read of the
/// change table (the slow poll, a doorbell, or the reconnection), rebuilds memory from the
/// database, sends its streams `reset`, and goes on: a write after it reaches every instance and
/// stream. Before, both kept serving their newer memory, and a write acknowledged after the
/// restore never reached memory or streams until a restart.
final class DatabaseRestoreTests: XCTestCase {
    func test_a_restored_older_dump_under_two_instances_reloads_both_and_resets_their_streams() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let a = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { a.stop() }
        let b = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { b.stop() }

        XCTAssertEqual(try a.put("age", 12).status, 200)
        XCTAssertEqual(try a.put(things: ["OLD"]).status, 200)
        let backedUp = try a.currentRevision()
        let dump = try cluster.dump(to: "backup.dump")
        for value in 13..<33 { XCTAssertEqual(try a.put("age", value).status, 200) }
        XCTAssertEqual(try b.put(things: ["NEW", "NEWER"]).status, 200)
        let newer = try b.currentRevision()  // B answered its write once it applied it
        XCTAssertTrue(eventually(within: 5) { (try? b.currentRevision()) == newer })
        XCTAssertTrue(eventually(within: 5) { (try? a.currentRevision()) == newer })
        let streams = try [a, b].map { try $0.openEventStream("/events?topics=preferences,things") }
        for stream in streams { _ = try Self.events(on: stream, until: { $0.value?["value"] == 32 }) }

        // Ordinary writes, one's own and the other's, never look like another history.
        let reloads = LogLine.parse(a.log + "\n" + b.log).filter { $0.message == "the database is not the history this instance applied; reloading from it" }
        XCTAssertEqual(reloads, [], a.log + b.log)

        try cluster.restore(from: dump)

        // Nothing is written: each instance notices the restore by itself and serves what the
        // database holds again.
        for (name, instance) in [("A", a), ("B", b)] {
            XCTAssertTrue(eventually(within: 10) { (try? instance.currentRevision()) == backedUp },
                          "\(name) is at \(String(describing: try? instance.currentRevision())), the restore at \(backedUp)")
            XCTAssertEqual(try instance.get("/preferences/age").value?["value"], 12, name)
            XCTAssertEqual(try instance.things(), ["OLD"], name)
        }
        // Their open streams were told to start over, and their snapshot is the restored state.
        for stream in streams {
            let seen = try Self.events(on: stream, until: { $0.name == "reset" })
            XCTAssertEqual(seen.last?.name, "reset")
            let snapshot = try Self.events(on: stream, until: { $0.name == "preference" && $0.value?["key"] == "age" })
            XCTAssertEqual(snapshot.last?.value?["value"], 12)
        }

        // A write after the restore takes the restored counter's next revision and reaches
        // both instances and both streams.
        let put = try a.put("age", 4242)
        XCTAssertEqual(put.status, 200, put.text)
        XCTAssertEqual(put.value?["revision"]?.intValue, Int(backedUp) + 1)
        for (name, instance) in [("A", a), ("B", b)] {
            XCTAssertTrue(eventually(within: 5) { (try? instance.get("/preferences/age").value?["value"]) == 4242 }, name)
            XCTAssertEqual(try instance.currentRevision(), backedUp + 1, name)
        }
        for stream in streams {
            let event = try Self.events(on: stream, until: { $0.value?["value"] == 4242 }).last
            XCTAssertEqual(event?.id, String(backedUp + 1))
        }
    }

    func test_a_database_created_again_empty_under_two_instances_is_taken_as_a_new_one() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let a = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { a.stop() }
        let b = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { b.stop() }
        for value in 20..<25 { XCTAssertEqual(try a.put("age", value).status, 200) }
        XCTAssertTrue(eventually(within: 5) { (try? b.get("/preferences/age").value?["value"]) == 24 })
        let identity = try cluster.psql("SELECT identity FROM meta")
        let stream = try b.openEventStream("/preferences/age/events")
        XCTAssertEqual(try stream.nextEvent().value?["value"], 24)

        try cluster.recreateDatabase()

        // Both reconnect, give the new database its schema (and a new identity), and reload.
        for (name, instance) in [("A", a), ("B", b)] {
            XCTAssertTrue(eventually(within: 15) { (try? instance.get("/preferences/age").value?["value"]) == 5 },
                          "\(name) shows \(String(describing: try? instance.get("/preferences/age").text))")
            XCTAssertEqual(try instance.currentRevision(), 0, name)
        }
        XCTAssertNotEqual(try cluster.psql("SELECT identity FROM meta"), identity)
        XCTAssertEqual(try Self.events(on: stream, until: { $0.name == "reset" }).last?.name, "reset")
        XCTAssertEqual(try Self.events(on: stream, until: { $0.name == "preference" }).last?.value?["value"], 5)
        XCTAssertTrue(eventually(within: 10) { (try? b.put("age", 7).status) == 200 })
        XCTAssertEqual(try Self.events(on: stream, until: { $0.value?["value"] == 7 }).last?.id, "1")
        XCTAssertTrue(eventually(within: 5) { (try? a.get("/preferences/age").value?["value"]) == 7 })
    }

    /// Stream tickets are signed with the secret the database keeps: instances that reloaded
    /// from a database created again take its secret, so a ticket an instance started on the new
    /// database issues opens a stream on them (before, they kept the old database's and answered 401).
    func test_instances_take_the_ticket_secret_of_a_database_created_again() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let arguments = ["--database-url", cluster.url, "--read-token", "restore-read-1"]
        let reader = ["Authorization": "Bearer restore-read-1"]
        let a = try TidingsProcess(arguments: arguments)
        defer { a.stop() }
        XCTAssertEqual(try a.put("age", 30, headers: reader).status, 200)
        try cluster.recreateDatabase()
        XCTAssertTrue(eventually(within: 15) { (try? a.get("/preferences/age", headers: reader).value?["value"]) == 5 }, "A reloaded")
        let c = try TidingsProcess(arguments: arguments)
        defer { c.stop() }
        for (issuer, opener) in [(c, a), (a, c)] {
            let issued = try issuer.request("POST", "/stream-tickets", headers: reader)
            XCTAssertEqual(issued.status, 201, issued.text)
            let ticket = try XCTUnwrap(issued.value?["ticket"]?.stringValue)
            let stream = try opener.openEventStream("/events?ticket=\(ticket)")
            XCTAssertEqual(stream.reply.status, 200, "issued on \(issuer === a ? "A" : "C"): \(stream.reply.text)")
        }
    }

    /// An instance paused through the restore comes back when new commits have already taken
    /// the counter past what it applied: the counter alone no longer tells, the commit time of
    /// its last applied revision does. It reloads instead of applying the new commits on top
    /// of the lost ones (which left the lost things list in its memory).
    func test_an_instance_paused_through_a_restore_and_the_writes_after_it_reloads() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let a = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { a.stop() }
        let b = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { b.stop() }
        XCTAssertEqual(try a.put(things: ["OLD"]).status, 200)
        let backedUp = try a.currentRevision()
        let dump = try cluster.dump(to: "backup.dump")
        XCTAssertEqual(try a.put(things: ["LOST"]).status, 200)
        for value in 40..<45 { XCTAssertEqual(try a.put("age", value).status, 200) }
        let applied = try a.currentRevision()
        XCTAssertTrue(eventually(within: 5) { (try? b.currentRevision()) == applied })
        let stream = try a.openEventStream("/events?topics=preferences,things")
        _ = try Self.events(on: stream, until: { $0.name == "things" })

        let pid = a.pid
        XCTAssertEqual(kill(pid, SIGSTOP), 0)
        var resumed = false
        defer { if !resumed { kill(pid, SIGCONT) } }
        try cluster.restore(from: dump)
        XCTAssertTrue(eventually(within: 10) { (try? b.things()) == ["OLD"] })
        for value in 100..<110 { XCTAssertEqual(try b.put("age", value).status, 200) }
        let now = try b.currentRevision()
        XCTAssertGreaterThan(now, applied, "the counter passed what A applied")
        XCTAssertEqual(kill(pid, SIGCONT), 0)
        resumed = true

        XCTAssertEqual(try Self.events(on: stream, until: { $0.name == "reset" }).last?.name, "reset")
        XCTAssertTrue(eventually(within: 5) { (try? a.currentRevision()) == now })
        XCTAssertEqual(try a.things(), ["OLD"], a.log)
        XCTAssertEqual(try a.get("/preferences/age").value?["value"], 109)
        XCTAssertGreaterThan(now, backedUp)
    }

    /// Events on `stream` up to and including the first that satisfies `found` (at most 200, 10 s).
    private static func events(on stream: EventStreamReader, until found: (EventStreamReader.Event) -> Bool) throws
        -> [EventStreamReader.Event] {
        var seen: [EventStreamReader.Event] = []
        let deadline = Date().addingTimeInterval(10)
        while seen.count < 200 {
            let event = try stream.nextEvent(timeout: max(0.01, deadline.timeIntervalSinceNow))
            seen.append(event)
            if found(event) { return seen }
        }
        XCTFail("not found in \(seen.map { $0.name ?? "message" })")
        return seen
    }
}
