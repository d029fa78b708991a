import Foundation
import Synchronization
import TestFixtures
import TidingsTesting
import XCTest

/// Several instances on one PostgreSQL (openapi.yaml, Several instances), end to end: a throwaway
/// cluster and real `tidings` processes started by the test, nginx in front of two of them.
final class PostgresInstancesTests: XCTestCase {
    private var cluster: PostgresCluster!

    override func setUpWithError() throws {
        cluster = try PostgresCluster()
        let cluster = cluster!
        addTeardownBlock { cluster.destroy() }
    }

    private func instance(_ extra: [String] = []) throws -> TidingsProcess {
        let process = try TidingsProcess(arguments: ["--database-url", cluster.url] + extra)
        addTeardownBlock { process.stop() }
        return process
    }

    func test_a_write_through_A_reaches_a_stream_on_B_and_an_id_from_A_resumes_on_B() throws {
        let a = try instance(), b = try instance()
        let stream = try b.openEventStream("/preferences/age/events")
        XCTAssertEqual(try stream.nextEvent().name, "preference")
        let sent = Date()
        let put = try a.put("age", 41)
        XCTAssertEqual(put.status, 200, put.text)
        let event = try stream.nextEvent(timeout: 5)
        let propagation = Date().timeIntervalSince(sent)
        print("propagation A → B: \(Int(propagation * 1000)) ms")
        XCTAssertEqual(event.value?["value"], 41)
        XCTAssertEqual(event.id, put.value?["revision"]?.intValue.map(String.init))
        XCTAssertEqual(try b.get("/preferences/age").value?["value"], 41)

        // More changes through A, then resume on B from the first id A gave: exactly the rest.
        let first = try XCTUnwrap(event.id)
        XCTAssertEqual(try a.put("age", 42).status, 200)
        XCTAssertEqual(try a.post(thing: "brb").status, 201)
        XCTAssertEqual(try a.put("name", "zed").status, 200)
        XCTAssertTrue(eventually { (try? b.currentRevision()) == (try? a.currentRevision()) })
        let resumed = try b.openEventStream("/events?topics=preferences,things", headers: ["Last-Event-ID": first])
        let replay = try resumed.nextEvents(3)
        XCTAssertEqual(replay.map(\.name), ["preference", "things", "preference"])
        XCTAssertEqual(replay.map { UInt64($0.id!)! }, (1...3).map { UInt64(first)! + $0 })
        XCTAssertEqual(replay.first?.value?["value"], 42)
    }

    func test_two_IfMatch_writes_on_one_revision_through_A_and_B_exactly_one_wins() throws {
        let a = try instance(), b = try instance()
        for round in 0..<10 {
            let current = try a.put("age", 100 + round)
            XCTAssertEqual(current.status, 200)
            let revision = try XCTUnwrap(current.value?["revision"]?.intValue)
            XCTAssertTrue(eventually { (try? b.currentRevision()) == UInt64(revision) })
            let statuses = Mutex<[Int]>([])
            let ports = [a.port, b.port]
            concurrently(2) { index in
                let reply = try? HTTPConnection(port: ports[index]).request(
                    "PUT", "/preferences/age", headers: ["If-Match": "\"\(revision)\""], json: ["value": 1000 * (index + 1) + round])
                statuses.withLock { $0.append(reply?.status ?? 0) }
            }
            XCTAssertEqual(statuses.withLock { $0 }.sorted(), [200, 412], "round \(round)")
        }
    }

    func test_the_same_new_thing_through_both_at_once_is_one_201_and_one_409() throws {
        let a = try instance(), b = try instance()
        for round in 0..<10 {
            let statuses = Mutex<[Int]>([])
            let ports = [a.port, b.port]
            concurrently(2) { index in
                let reply = try? HTTPConnection(port: ports[index]).request("POST", "/things", json: ["thing": "race\(round)"])
                statuses.withLock { $0.append(reply?.status ?? 0) }
            }
            XCTAssertEqual(statuses.withLock { $0 }.sorted(), [201, 409], "round \(round)")
            // Removing it through both: one 204, one 404.
            let removals = Mutex<[Int]>([])
            concurrently(2) { index in
                let reply = try? HTTPConnection(port: ports[index]).request("DELETE", "/things/race\(round)")
                removals.withLock { $0.append(reply?.status ?? 0) }
            }
            XCTAssertEqual(removals.withLock { $0 }.sorted(), [204, 404], "round \(round)")
        }
    }

    func test_SIGKILL_of_A_during_a_write_load_loses_no_acknowledged_write() throws {
        let a = try instance(), b = try instance()
        let acked = Mutex<[Int: Int]>([:])  // client → last acknowledged value
        let port = a.port
        let stop = Mutex(false)
        let pid = a.pid
        let killer = Thread {
            Thread.sleep(forTimeInterval: 1.5)
            stop.withLock { $0 = true }
            kill(pid, SIGKILL)
        }
        killer.start()
        concurrently(8) { client in
            guard let connection = try? HTTPConnection(port: port, timeout: 10) else { return }
            var n = 0
            while !stop.withLock({ $0 }) {
                n += 1
                guard let put = try? connection.request("PUT", "/preferences/numberOfItems", json: ["value": client * 1_000_000 + n]),
                      put.status == 200 else { return }
                acked.withLock { $0[client] = n }
            }
        }
        a.waitForExit()
        let values = acked.withLock { $0 }
        XCTAssertFalse(values.isEmpty, "some writes were acknowledged before the kill")
        // B (and a restarted A) hold a value at least as new as every acknowledged one: the
        // stored value is one that was sent, and its revision is not older than any ack.
        // The killed instance's last batch may still commit after the kill (PostgreSQL finishes
        // the statement): compare once B has caught up with what a fresh instance reads.
        let restarted = try instance()
        XCTAssertTrue(eventually(within: 10) { (try? b.currentRevision()) == (try? restarted.currentRevision()) })
        let stored = try XCTUnwrap(b.get("/preferences/numberOfItems").value?["value"]?.intValue)
        let client = stored / 1_000_000, n = stored % 1_000_000
        XCTAssertNotNil(values[client] ?? (n > 0 ? n : nil), "the stored value was written by a client")
        XCTAssertEqual(try restarted.get("/preferences/numberOfItems").value?["value"]?.intValue, stored)
        // Every acknowledged write is in the durable history, in order: replay from 0.
        let history = try restarted.openEventStream("/preferences/numberOfItems/events", headers: ["Last-Event-ID": "0"])
        var seen: [Int: Int] = [:]
        let total = try restarted.currentRevision()
        var last: UInt64 = 0
        while last < total, let event = try? history.nextEvent(timeout: 5) {
            last = UInt64(event.id ?? "0") ?? last
            guard let value = event.value?["value"]?.intValue else { continue }
            seen[value / 1_000_000] = max(seen[value / 1_000_000] ?? 0, value % 1_000_000)
        }
        for (client, n) in values {
            XCTAssertGreaterThanOrEqual(seen[client] ?? 0, n, "client \(client)'s acknowledged write \(n) is durable")
        }
    }

    func test_a_PostgreSQL_restart_during_writes_503_meanwhile_then_both_recover_and_streams_continue_without_a_gap() throws {
        // Debug logs kept: a failure shows what each instance's store and watcher did.
        let a = try instance(["--log-level", "debug"]), b = try instance(["--log-level", "debug"])
        let failuresBefore = testRun?.totalFailureCount ?? 0
        defer {
            if (testRun?.totalFailureCount ?? 0) > failuresBefore {
                print("--- A:\n\(a.log)\n--- B:\n\(b.log)\n--- PostgreSQL:\n\(cluster.serverLog)")
            }
        }
        let stream = try b.openEventStream("/events?topics=preferences,things")
        _ = try stream.nextEvents(9)  // the snapshot: 8 preferences and the things
        XCTAssertEqual(try a.put("age", 1).status, 200)
        let before = try stream.nextEvent(timeout: 5)
        XCTAssertEqual(before.value?["value"], 1)

        try cluster.stop(immediate: true)
        // While it is down: reads from memory, writes 503 with Retry-After, /readyz 503.
        XCTAssertTrue(try eventually(within: 10) {
            let reply = try a.put("age", 2)
            return reply.status == 503 && reply.header("Retry-After") != nil
        }, "writes answer 503 with Retry-After while the database is down")
        XCTAssertEqual(try a.get("/preferences/age").value?["value"], 1, "reads are served from memory")
        XCTAssertTrue(eventually(within: 10) { (try? a.get("/readyz").status) == 503 })
        XCTAssertEqual(try b.get("/healthz").status, 200)

        try cluster.start()
        XCTAssertTrue(eventually(within: 20) { (try? a.put("age", 3).status) == 200 }, "writes work again")
        XCTAssertTrue(eventually(within: 10) { (try? a.get("/readyz").status) == 200 })
        // B retries on its own back-off (at most 5 s between attempts).
        XCTAssertTrue(eventually(within: 20) { (try? b.get("/readyz").status) == 200 })
        XCTAssertEqual(try a.post(thing: "back").status, 201)
        // B's stream, open all along, continues with the next ids: no gap, no duplicate.
        var ids = [UInt64(before.id!)!]
        var values: [String] = []
        while values.last != "back", let event = try? stream.nextEvent(timeout: 10) {
            XCTAssertNotEqual(event.name, "reset", "the position was still in the history")
            ids.append(UInt64(event.id!)!)
            values.append(event.name == "things" ? "back" : "\(event.value?["value"] ?? nil)")
        }
        XCTAssertEqual(values.last, "back")
        XCTAssertEqual(ids, Array(ids.first!...ids.last!), "ids continue without a gap")
        XCTAssertEqual(try b.get("/preferences/age").value?["value"], 3)
    }

    func test_a_browser_style_stream_through_nginx_receives_changes_written_through_the_other_instance() throws {
        let a = try instance(), b = try instance()
        let balancer = try NginxBalancer(upstreamPorts: [a.port, b.port])
        addTeardownBlock { balancer.stop() }
        let viaProxy = try HTTPConnection(port: balancer.port).openEventStream("/events?topics=preferences&keys=name")
        XCTAssertEqual(viaProxy.reply.status, 200)
        XCTAssertEqual(viaProxy.reply.header("Content-Type"), "text/event-stream")
        XCTAssertEqual(try viaProxy.nextEvent().name, "preference")
        // Written straight to each instance: whichever one nginx picked, the other wrote one.
        XCTAssertEqual(try a.put("name", "via-a").status, 200)
        XCTAssertEqual(try viaProxy.nextEvent(timeout: 5).value?["value"], "via-a")
        XCTAssertEqual(try b.put("name", "via-b").status, 200)
        XCTAssertEqual(try viaProxy.nextEvent(timeout: 5).value?["value"], "via-b")
        // And writes through the balancer itself.
        let put = try HTTPConnection(port: balancer.port).request("PUT", "/preferences/name", json: ["value": "via-nginx"])
        XCTAssertEqual(put.status, 200, put.text)
        XCTAssertEqual(try viaProxy.nextEvent(timeout: 5).value?["value"], "via-nginx")
    }
}
