import Foundation
import Synchronization
import XCTest
import TestFixtures
import TidingsTesting

/// Several processes on one data directory (openapi.yaml, Several instances): writers on both, a
/// stream on each; nothing crashes, every acknowledged write is stored once, and every stream
/// sees every change of both instances in strictly increasing order.
final class SeveralInstancesSQLiteTests: XCTestCase {
    /// `TIDINGS_SOAK_SECONDS` shortens or lengthens the run (default 15, inside the suite's 15
    /// minutes: with the suite's data in memory the six writers make thousands of writes in it,
    /// more than 30 s did on a disk).
    private var duration: Double {
        ProcessInfo.processInfo.environment["TIDINGS_SOAK_SECONDS"].flatMap(Double.init) ?? 15
    }

    func test_two_instances_three_writers_each_every_ack_stored_once_and_seen_in_order_by_both_streams() throws {
        let directory = try TemporaryDirectory()
        let instances = [try TidingsProcess(dataDirectory: directory.url), try TidingsProcess(dataDirectory: directory.url)]
        defer { instances.forEach { $0.stop() } }

        // Streams first: they start from the current revision and must then see everything.
        let ports = instances.map(\.port)
        let start = try instances[0].currentRevision()
        let seen = Mutex<[[(id: UInt64, name: String, data: String)]]>([[], []])
        let stopReading = Mutex(false)
        let readers = DispatchGroup()
        let opened = DispatchSemaphore(value: 0)
        for index in 0..<2 {
            readers.enter()
            Thread {
                defer { readers.leave() }
                let stream = try? HTTPConnection(port: ports[index], timeout: 10).openEventStream("/events?topics=preferences,things")
                opened.signal()
                guard let stream else { return }
                while !stopReading.withLock({ $0 }) {
                    guard let event = try? stream.nextEvent(timeout: 1) else { continue }
                    guard let id = event.id.flatMap(UInt64.init), let name = event.name else { continue }
                    seen.withLock { $0[index].append((id, name, event.data)) }
                }
            }.start()
        }
        opened.wait()
        opened.wait()

        let acked = Mutex<[(instance: Int, revision: UInt64, key: String, value: Int)]>([])
        let failures = Mutex<[String]>([])
        let deadline = Date().addingTimeInterval(duration)
        concurrently(6) { writer in
            guard let instance = try? HTTPConnection(port: ports[writer % 2], timeout: 10) else {
                return failures.withLock { $0.append("cannot connect") }
            }
            let key = ["age", "numberOfItems"][writer % 2]
            var n = 0
            while Date() < deadline {
                n += 1
                let value = writer * 10_000_000 + n
                do {
                    let reply = try instance.request("PUT", "/preferences/\(key)", json: ["value": value])
                    if reply.status == 200, let revision = reply.value?["revision"]?.intValue {
                        acked.withLock { $0.append((writer % 2, UInt64(revision), key, value)) }
                    } else {
                        failures.withLock { $0.append("PUT \(key) on \(writer % 2): \(reply.status) \(reply.text)") }
                    }
                    if n % 50 == 0 {
                        let thing = try instance.request("POST", "/things", json: ["thing": "w\(writer)n\(n)"])
                        if thing.status != 201 { failures.withLock { $0.append("POST thing: \(thing.status) \(thing.text)") } }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        XCTAssertEqual(failures.withLock { $0 }.prefix(5).map { $0 }, [], "every write is acknowledged")
        for instance in instances {
            XCTAssertEqual(try instance.request("GET", "/healthz").status, 200, "both instances alive")
        }
        // Both instances reach the same revision (the other's changes arrive by its doorbell).
        let final = try instances.map { try $0.currentRevision() }.max() ?? 0
        let agreed = Date().addingTimeInterval(10)
        while Date() < agreed, try instances.contains(where: { try $0.currentRevision() != final }) {
            Thread.sleep(forTimeInterval: 0.02)
        }
        XCTAssertEqual(try instances.map { try $0.currentRevision() }, [final, final])

        // Both streams catch up to the final revision.
        let caughtUp = Date().addingTimeInterval(15)
        while Date() < caughtUp, seen.withLock({ $0 }).contains(where: { ($0.last?.id ?? 0) < final }) {
            Thread.sleep(forTimeInterval: 0.05)
        }
        stopReading.withLock { $0 = true }
        readers.wait()

        let acks = acked.withLock { $0 }
        XCTAssertGreaterThan(acks.count, 100)
        XCTAssertEqual(Set(acks.map(\.revision)).count, acks.count, "every acknowledged write took its own revision")
        for (index, events) in seen.withLock({ $0 }).enumerated() {
            let live = events.filter { $0.id > start }
            let ids = live.map(\.id)
            XCTAssertEqual(ids, ids.sorted(), "stream \(index): ids strictly increasing")
            XCTAssertEqual(Set(ids).count, ids.count, "stream \(index): no duplicate")
            XCTAssertEqual(ids.last, final, "stream \(index) reached the final revision")
            XCTAssertEqual(live.count, Int(final - start), "stream \(index): one event per revision, none missing")
            let byRevision = Dictionary(live.map { ($0.id, $0.data) }, uniquingKeysWith: { a, _ in a })
            for ack in acks {
                guard let data = byRevision[ack.revision] else {
                    XCTFail("stream \(index) missed acknowledged revision \(ack.revision)"); break
                }
                XCTAssertEqual(JSONValue.parse(Array(data.utf8))?["value"], .number(Double(ack.value)), "stream \(index) revision \(ack.revision): \(data)")
            }
        }
        // Stored once: the durable value of each key is its last acknowledged write.
        for key in ["age", "numberOfItems"] {
            let last = acks.filter { $0.key == key }.max { $0.revision < $1.revision }
            XCTAssertEqual(try instances[1].get("/preferences/\(key)").value?["value"]?.intValue, last?.value)
        }
    }
}

/// The posts feed across instances (openapi.yaml, Several instances): fetched once per refresh for
/// all of them; every instance serves and announces the same document with the same revision.
final class SeveralInstancesPostsTests: XCTestCase {
    func test_one_upstream_fetch_per_refresh_for_all_instances_and_the_same_document_everywhere() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed, etag: "v1")
        let directory = try TemporaryDirectory()
        let arguments = ["--feed-url", upstream.url, "--feed-timeout", "2", "--feed-refresh", "0.5"]
        // Two instances, each refreshing every 0.5 s.
        let a = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { b.stop() }

        let streamOnB = try b.openEventStream("/posts/events")
        XCTAssertEqual(try a.posts(wait: 10).state, "loaded")
        // Whichever instance fetched last, both end serving the same stored document (B takes
        // A's fetch instead of asking upstream again, or A takes B's if B's first read raced it).
        XCTAssertTrue(try eventually(within: 5) {
            let onA = try a.get("/posts").text, onB = try b.get("/posts").text
            return onA == onB && onA.contains(#""state":"loaded""#)
        }, "the same document on both instances")
        let document = try b.posts()
        var announced: EventStreamReader.Event?
        while let event = try? streamOnB.nextEvent(timeout: 5) {
            announced = event
            if event.json?["fetchedAt"] as? String == document.fetchedAt { break }
        }
        XCTAssertEqual(announced?.json?["fetchedAt"] as? String, document.fetchedAt, "B's stream announced it")

        // Background refreshes (every 0.5 s on each instance): one instance holds the fetch
        // lease, so the upstream sees about one request per period, not one per instance.
        let before = upstream.requestCount
        Thread.sleep(forTimeInterval: 3)
        let during = upstream.requestCount - before
        XCTAssertGreaterThanOrEqual(during, 3, "refreshes keep going")
        XCTAssertLessThanOrEqual(during, 8, "about one fetch per 0.5 s period for both instances, not two")
        XCTAssertEqual(try a.currentRevision(), try b.currentRevision())
    }
}

extension SeveralInstancesPostsTests {
    /// A refresh that finds the same posts is invisible (openapi.yaml, Posts), also when the
    /// instance that fetches holds posts it took from another instance's stored document (a
    /// re-encoded body, so the bytes differ from the upstream's): no new revision, no event.
    func test_refreshes_that_find_the_same_posts_change_nothing_on_any_instance() throws {
        let upstream = try UpstreamServer()
        defer { upstream.stop() }
        upstream.behaviour = .posts(PostsFixture.feed)   // no validators: every refresh is a 200
        let directory = try TemporaryDirectory()
        let arguments = ["--feed-url", upstream.url, "--feed-timeout", "2", "--feed-refresh", "0"]
        let a = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments, dataDirectory: directory.url)
        defer { b.stop() }
        XCTAssertEqual(try a.posts(wait: 10).state, "loaded")
        // B reads the posts only once it has applied A's document (a cold load started on B
        // before that stores its own `loading` over A's outcome — a known gap, not this point).
        let stored = try a.currentRevision()
        XCTAssertTrue(try eventually(within: 5) { try b.currentRevision() >= stored })
        XCTAssertTrue(try eventually(within: 5) { try a.get("/posts").text == b.get("/posts").text },
                      "B took A's document")
        let revision = try a.currentRevision(), document = try a.get("/posts").text
        XCTAssertEqual(revision, stored)
        let stream = try a.openEventStream("/events?topics=posts,preferences&keys=age&lastEventId=\(revision)")
        // B fetches itself now (nobody else is loading), holding posts it took from A's document.
        for (instance, name) in [(b, "B"), (a, "A"), (b, "B")] {
            let before = upstream.requestCount
            // The last fetcher lets its load lease go just after storing the outcome: a refresh
            // in that instant still joins its load (answered from the stored outcome, without a
            // request), so it is asked again until the instance fetches itself.
            let fetched = try eventually(within: 6, every: 0.3) {
                XCTAssertEqual(try instance.request("POST", "/posts/refresh").status, 202)
                return eventually(within: 0.3) { upstream.requestCount > before }
            }
            XCTAssertTrue(fetched, "\(name) fetched")
            XCTAssertEqual(try instance.posts(wait: 5).state, "loaded")
            XCTAssertEqual(try a.currentRevision(), revision, "a refresh by \(name) with the same posts took a revision; "
                           + "posts events: \((try? a.openEventStream("/posts/events?lastEventId=\(revision)").nextEvents(2, timeout: 2).map { "\($0.id ?? "") \($0.data.prefix(90))" }) ?? [])")
            XCTAssertEqual(try b.get("/posts").text, document, "the same document, fetch time included")
        }
        // The proof that nothing was announced: the next event on the stream is a later change.
        XCTAssertEqual(try a.request("PUT", "/preferences/age", json: ["value": 41]).status, 200)
        let next = try stream.nextEvent(timeout: 5)
        XCTAssertEqual(next.name, "preference", "a \(next.name ?? "") event came first, for a refresh that found nothing new")
    }
}

/// Several processes started at the same moment on an empty data directory all come up.
final class SimultaneousStartTests: XCTestCase {
    func test_three_processes_started_at_once_on_an_empty_directory_all_serve() throws {
        for _ in 0..<3 {
            let directory = try TemporaryDirectory()
            let url = directory.url
            let started = Mutex<[Started]>([])
            let failures = Mutex<[String]>([])
            concurrently(3) { _ in
                do {
                    let process = try TidingsProcess(dataDirectory: url)
                    started.withLock { $0.append(Started(process: process)) }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            let processes = started.withLock { $0 }.map(\.process)
            defer { processes.forEach { $0.stop() } }
            XCTAssertEqual(failures.withLock { $0 }, [], "every process started")
            XCTAssertEqual(processes.count, 3)
            for process in processes { XCTAssertEqual(try process.put("age", 7).status, 200, process.log) }
        }
    }
}

/// A process started on a helper thread and used by the test's thread only after every helper
/// ended (`concurrently` waits for them): never used by two threads at once.
private struct Started: @unchecked Sendable {
    let process: TidingsProcess
}
