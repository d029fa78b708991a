import Foundation
import Synchronization
import XCTest
import TestFixtures
import TidingsTesting

/// Writes are acknowledged only once durable; restarts (clean or SIGKILL) keep every value,
/// every thing and the revision, which never goes backwards.
final class DurabilityTests: XCTestCase {
    func test_restart_keeps_every_value_every_thing_and_the_revision() throws {
        let directory = try TemporaryDirectory()
        let first = try TidingsProcess(dataDirectory: directory.url)
        XCTAssertEqual(try first.put("name", "Grüße, \"quoted\"\n🎉").status, 200)
        XCTAssertEqual(try first.put("age", 41).status, 200)
        XCTAssertEqual(try first.put("speed", 2.5).status, 200)
        XCTAssertEqual(try first.put("readyForAction", true).status, 200)
        XCTAssertEqual(try first.put("numberOfItems", 3).status, 200)
        XCTAssertEqual(try first.request("DELETE", "/preferences/numberOfItems").status, 200)
        XCTAssertEqual(try first.request("PATCH", "/preferences", json: ["onboardingCompleted": true, "age": 42]).status, 200)
        XCTAssertEqual(try first.put(things: ["yolo", "btw", "straße"]).status, 200)
        XCTAssertEqual(try first.post(thing: "imo").status, 201)
        XCTAssertEqual(try first.request("DELETE", "/things/btw").status, 204)

        let map = try first.get("/preferences").value
        let records = try StreamsTests.builtInKeys.map { try first.get("/preferences/\($0)").value }
        let things = try first.get("/things").value
        let revision = try first.currentRevision()
        XCTAssertEqual(revision, 11)
        XCTAssertEqual(first.stop(), 0)

        let second = try TidingsProcess(dataDirectory: directory.url)
        defer { second.stop() }
        XCTAssertEqual(try second.get("/preferences").value, map)
        XCTAssertEqual(try StreamsTests.builtInKeys.map { try second.get("/preferences/\($0)").value }, records)
        XCTAssertEqual(try second.get("/things").value, things)
        XCTAssertEqual(things?["things"], ["YOLO", "STRASSE", "IMO"])
        XCTAssertEqual(try second.currentRevision(), revision)
        // ETags survive too, so conditional requests keep working across the restart.
        XCTAssertEqual(try second.get("/preferences/age", headers: ["If-None-Match": "\"\(records[4]?["revision"] ?? 0)\""]).status, 304)
        // Setting a value equal to the stored one is still no change.
        XCTAssertEqual(try second.put("age", 42).value?["revision"], records[4]?["revision"])
        XCTAssertEqual(try second.currentRevision(), revision)
        // The next change takes the next revision.
        XCTAssertEqual(try second.put("age", 43).value?["revision"]?.uint64Value, revision + 1)
        let snapshot = try second.openEventStream("/preferences/age/events").nextEvent()
        XCTAssertEqual(snapshot.id, "\(revision + 1)")
    }

    func test_revision_never_goes_backwards_across_restarts_even_after_SIGKILL() throws {
        let directory = try TemporaryDirectory()
        var last: UInt64 = 0
        for round in 0..<3 {
            let server = try TidingsProcess(dataDirectory: directory.url)
            XCTAssertEqual(try server.currentRevision(), last, "round \(round)")
            let reply = try server.post(thing: "round \(round)")
            let revision = try XCTUnwrap(reply.value?["revision"]?.uint64Value)
            XCTAssertGreaterThan(revision, last)
            last = revision
            if round == 1 {
                XCTAssertEqual(server.stop(signal: SIGTERM), 0)
            } else {
                server.stop(signal: SIGKILL)
            }
        }
        let server = try TidingsProcess(dataDirectory: directory.url)
        defer { server.stop() }
        XCTAssertEqual(try server.things(), ["ROUND 0", "ROUND 1", "ROUND 2"])
        XCTAssertEqual(try server.currentRevision(), last)
    }

    func test_SIGKILL_during_a_16_client_write_load_loses_no_acknowledged_write() throws {
        let directory = try TemporaryDirectory()
        let clients = 16
        let keys = (0..<clients).map { "c\($0)" }
        let schema = "{" + keys.map { #""\#($0)": {"type": "integer", "default": 0}"# }.joined(separator: ",") + "}"
        let schemaPath = try directory.file("schema.json", schema)
        let dataDirectory = directory.url.appendingPathComponent("data")
        let server = try TidingsProcess(arguments: ["--preferences", schemaPath], dataDirectory: dataDirectory)
        let port = server.port
        let pid = server.pid

        struct Ledger {
            var ackedValue: [Int]
            var sentValue: [Int]
            var ackedThings: Set<String> = []
            var sentThings: Set<String> = []
            var maxAckedRevision: UInt64 = 0
            var ackedRevisions: Set<UInt64> = []
            var acks = 0
            var unexpected: [String] = []
        }
        let ledger = Mutex(Ledger(ackedValue: Array(repeating: 0, count: clients), sentValue: Array(repeating: 0, count: clients)))
        let stop = Mutex(false)

        let killer = Thread {
            let deadline = Date().addingTimeInterval(20)
            while ledger.withLock({ $0 }).acks < 2_000 && Date() < deadline { usleep(5_000) }
            stop.withLock { $0 = true }
            kill(pid, SIGKILL)
        }
        killer.start()

        concurrently(clients) { client in
            guard let connection = try? HTTPConnection(port: port, timeout: 10) else { return }
            var n = 0
            while !stop.withLock({ $0 }) {
                n += 1
                ledger.withLock { $0.sentValue[client] = n }
                guard let put = try? connection.request("PUT", "/preferences/c\(client)", json: ["value": n]) else { return }
                guard put.status == 200 else {
                    ledger.withLock { $0.unexpected.append("PUT c\(client)=\(n): \(put.status) \(put.text)") }
                    return
                }
                let revision = put.value?["revision"]?.uint64Value ?? 0
                ledger.withLock {
                    $0.ackedValue[client] = n
                    $0.maxAckedRevision = max($0.maxAckedRevision, revision)
                    $0.ackedRevisions.insert(revision)
                    $0.acks += 1
                }
                let thing = "T\(client)-\(n)"
                ledger.withLock { _ = $0.sentThings.insert(thing.uppercased()) }
                guard let post = try? connection.request("POST", "/things", json: ["thing": thing]) else { return }
                guard post.status == 201 else {
                    ledger.withLock { $0.unexpected.append("POST \(thing): \(post.status) \(post.text)") }
                    return
                }
                let thingRevision = post.value?["revision"]?.uint64Value ?? 0
                ledger.withLock {
                    _ = $0.ackedThings.insert(thing.uppercased())
                    $0.maxAckedRevision = max($0.maxAckedRevision, thingRevision)
                    $0.ackedRevisions.insert(thingRevision)
                    $0.acks += 1
                }
            }
        }
        while !killer.isFinished { usleep(1_000) }
        server.stop()

        let final = ledger.withLock { $0 }
        XCTAssertEqual(final.unexpected, [])
        XCTAssertGreaterThanOrEqual(final.acks, 2_000, "the load did not get going")
        XCTAssertEqual(final.ackedRevisions.count, final.acks, "two acknowledged changes share a revision")

        let restarted = try TidingsProcess(arguments: ["--preferences", schemaPath], dataDirectory: dataDirectory)
        defer { restarted.stop() }
        let values = try XCTUnwrap(restarted.get("/preferences").value)
        for client in 0..<clients {
            let value = values["c\(client)"]?.intValue ?? -1
            // Every acknowledged value is there; at most the one write in flight went further.
            XCTAssertTrue(value == final.ackedValue[client] || value == final.sentValue[client],
                          "c\(client) = \(value), acknowledged \(final.ackedValue[client]), sent \(final.sentValue[client])")
        }
        let stored = Set(try restarted.things())
        let lost = final.ackedThings.subtracting(stored)
        XCTAssertTrue(lost.isEmpty, "acknowledged things lost: \(lost.sorted().prefix(10))")
        let invented = stored.subtracting(final.sentThings)
        XCTAssertTrue(invented.isEmpty, "things nobody sent: \(invented.sorted().prefix(10))")
        XCTAssertGreaterThanOrEqual(try restarted.currentRevision(), final.maxAckedRevision)
        // The counter continues above everything acknowledged.
        let next = try restarted.post(thing: "after the crash").value?["revision"]?.uint64Value ?? 0
        XCTAssertGreaterThan(next, final.maxAckedRevision)
    }

    func test_resume_across_a_restart_never_leaves_a_silent_gap() throws {
        let directory = try TemporaryDirectory()
        let first = try TidingsProcess(dataDirectory: directory.url)
        for value in 1...3 { XCTAssertEqual(try first.put("age", value).status, 200) }
        XCTAssertEqual(first.stop(), 0)

        let second = try TidingsProcess(dataDirectory: directory.url)
        defer { second.stop() }
        // At the current revision: nothing was missed, nothing is sent.
        // (Its first event, below, is the next change's.)
        let upToDate = try second.openEventStream("/preferences/age/events", headers: ["Last-Event-ID": "3"])
        // From before the restart: exactly the missed events, or a reset and a fresh snapshot.
        let behind = try second.openEventStream("/preferences/age/events", headers: ["Last-Event-ID": "1"])
        let firstEvent = try behind.nextEvent()
        if firstEvent.name == "reset" {
            let snapshot = try behind.nextEvent()
            XCTAssertEqual(snapshot.id, "3")
            XCTAssertEqual(snapshot.value, ["key": "age", "value": 3, "revision": 3])
        } else {
            XCTAssertEqual([firstEvent.id, try behind.nextEvent().id], ["2", "3"])
        }
        XCTAssertEqual(try second.put("age", 4).status, 200)
        XCTAssertEqual(try upToDate.nextEvent().id, "4")
        XCTAssertEqual(try behind.nextEvent().id, "4")
    }

    func test_SIGTERM_during_writes_answers_in_flight_writes_and_they_are_durable() throws {
        let directory = try TemporaryDirectory()
        let server = try TidingsProcess(dataDirectory: directory.url)
        let port = server.port
        let pid = server.pid
        let acked = Mutex(Set<String>())
        let started = Mutex(0)
        concurrently(9) { client in
            if client == 8 {
                while started.withLock({ $0 }) < 100 { usleep(1_000) }
                kill(pid, SIGTERM)
                return
            }
            guard let connection = try? HTTPConnection(port: port, timeout: 10) else { return }
            for n in 0..<10_000 {
                let thing = "S\(client)-\(n)"
                started.withLock { $0 += 1 }
                guard let reply = try? connection.request("POST", "/things", json: ["thing": thing]),
                      reply.status == 201 else { return }
                acked.withLock { _ = $0.insert(thing) }
            }
        }
        XCTAssertEqual(server.stop(), 0)
        let restarted = try TidingsProcess(dataDirectory: directory.url)
        defer { restarted.stop() }
        let stored = Set(try restarted.things())
        XCTAssertTrue(acked.withLock { $0 }.subtracting(stored).isEmpty, "acknowledged before SIGTERM but lost")
        XCTAssertGreaterThan(acked.withLock { $0 }.count, 0)
    }
}
