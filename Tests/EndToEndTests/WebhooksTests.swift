import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Webhooks end to end (API.md "Changes as code, on a schedule, and to webhooks"): the real
/// binary delivering to a real receiver on loopback (Tests/webhooks/receiver.py), which checks
/// every signature with the Standard Webhooks reference library. The retry clocks are shortened
/// through the test-only `TIDINGS_TEST_WEBHOOK_*` variables.
final class WebhooksTests: XCTestCase {
    private var receiver: WebhookReceiver!

    /// Retries after 0.2 s, attempts cut at 1 s, leases of 2 s.
    static let fastClocks = ["TIDINGS_TEST_WEBHOOK_BACKOFF": "0.2", "TIDINGS_TEST_WEBHOOK_TIMEOUT": "1",
                             "TIDINGS_TEST_WEBHOOK_LEASE": "2"]

    override func setUpWithError() throws {
        receiver = try WebhookReceiver()
        let receiver = receiver!
        addTeardownBlock { receiver.stop() }
    }

    private func server(_ hooks: [(name: String, extra: [String: Any])], allowPrivate: Bool = true,
                        environment: [String: String] = fastClocks, dataDirectory: URL? = nil) throws -> TidingsProcess {
        let file = try receiver.file(hooks)
        let process = try TidingsProcess(arguments: ["--webhooks", file.path] + (allowPrivate ? ["--webhook-allow-private"] : []),
                                         environment: environment, dataDirectory: dataDirectory)
        addTeardownBlock { process.stop() }
        return process
    }

    private func hook(_ server: TidingsProcess, _ name: String) throws -> JSONValue? {
        try server.get("/webhooks").value?["webhooks"]?.arrayValue?.first { $0["name"]?.stringValue == name }
    }

    func test_changes_are_delivered_signed_in_revision_order_with_their_history_record() throws {
        let server = try server([(name: "ordered", extra: [:])])
        var revisions: [Int] = []
        for age in 1...12 {
            let reply = try server.put("age", age)
            XCTAssertEqual(reply.status, 200, reply.text)
            revisions.append(try XCTUnwrap(reply.value?["revision"]?.intValue))
        }
        let added = try server.post(thing: "brb", headers: ["Tidings-Reason": "a test"])
        XCTAssertEqual(added.status, 201)
        revisions.append(Int(try server.currentRevision()))

        XCTAssertTrue(try eventually(within: 15) { try receiver.delivered("ordered").count >= revisions.count },
                      "delivered: \((try? receiver.delivered("ordered").map(\.id)) ?? []); log:\n\(server.log)")
        let delivered = try receiver.delivered("ordered")
        XCTAssertEqual(delivered.map(\.revision), revisions)
        XCTAssertEqual(delivered.map(\.id), revisions.map { "default-\($0)" })
        XCTAssertTrue(delivered.allSatisfy(\.verified), "a signature did not verify")
        XCTAssertEqual(try receiver.attempts("ordered").count, revisions.count, "nothing is sent twice when all goes well")
        let first = delivered[0].payload
        XCTAssertEqual(first["type"]?.stringValue, "change")
        XCTAssertEqual(first["data"]?["topic"]?.stringValue, "preferences")
        XCTAssertEqual(first["data"]?["key"]?.stringValue, "age")
        XCTAssertEqual(first["data"]?["after"]?.intValue, 1)
        XCTAssertEqual(first["data"]?["environment"]?.stringValue, "default")
        let last = delivered.last!.payload["data"]
        XCTAssertEqual(last?["topic"]?.stringValue, "things")
        XCTAssertEqual(last?["op"]?.stringValue, "add")
        XCTAssertEqual(last?["after"]?.stringValue, "BRB")
        XCTAssertEqual(last?["reason"]?.stringValue, "a test")
        // The record is the history's record.
        let history = try server.get("/history?after=\(revisions[0] - 1)&limit=1").value?["changes"]?[0]
        XCTAssertEqual(history?["at"], first["data"]?["at"])
        XCTAssertEqual(history?["actor"], first["data"]?["actor"])

        let status = try XCTUnwrap(try hook(server, "ordered"))
        XCTAssertEqual(status["state"]?.stringValue, "active")
        XCTAssertEqual(status["lastDelivered"]?.intValue, revisions.last)
        XCTAssertEqual(status["backlog"]?.intValue, 0)
        XCTAssertEqual(status["lastError"], .null)
        XCTAssertEqual(status["url"]?.stringValue, receiver.url(for: "ordered"))
        // The secret is never shown: the hook has exactly these members, their values checked here.
        XCTAssertEqual(status.objectValue.map { Set($0.keys) },
                       ["name", "url", "environments", "state", "lastDelivered", "backlog", "lastError", "nextAttempt"])
        XCTAssertEqual(status["name"]?.stringValue, "ordered")
        XCTAssertEqual(status["environments"], .null)
        XCTAssertEqual(status["nextAttempt"], .null)
        let metrics = MetricSamples.parse(try server.get("/metrics").text)
        XCTAssertEqual(metrics[#"tidings_webhook_deliveries_total{hook="ordered",outcome="delivered"}"#], Double(revisions.count),
                       "\(metrics.filter { $0.key.hasPrefix("tidings_webhook") })")
        XCTAssertTrue(try eventually(within: 3) {
            MetricSamples.parse(try server.get("/metrics").text)[#"tidings_webhook_backlog{hook="ordered"}"#] == 0
        })
    }

    func test_a_hook_filtered_by_environment_gets_only_that_environments_changes_named_in_the_record() throws {
        let server = try server([(name: "staging", extra: ["environments": ["staging"]]),
                                 (name: "main", extra: ["environments": ["default"]]),
                                 (name: "all", extra: [:])])
        XCTAssertEqual(try server.request("PUT", "/environments/staging").status, 201)
        let staged = try server.request("PUT", "/environments/staging/preferences/age", json: ["value": 21])
        XCTAssertEqual(staged.status, 200, staged.text)
        let stagedRevision = try XCTUnwrap(staged.value?["revision"]?.intValue)
        let main = try server.put("age", 7)
        let mainRevision = try XCTUnwrap(main.value?["revision"]?.intValue)

        XCTAssertTrue(try eventually(within: 15) {
            try receiver.delivered("all").count >= 2 && receiver.delivered("staging").count >= 1 && receiver.delivered("main").count >= 1
        }, "log:\n\(server.log)")
        let toStaging = try receiver.delivered("staging")
        XCTAssertEqual(toStaging.map(\.id), ["staging-\(stagedRevision)"])
        XCTAssertEqual(toStaging.first?.payload["data"]?["environment"]?.stringValue, "staging")
        XCTAssertEqual(toStaging.first?.payload["data"]?["after"]?.intValue, 21)
        XCTAssertTrue(toStaging.allSatisfy(\.verified))
        let toMain = try receiver.delivered("main")
        XCTAssertEqual(toMain.map(\.id), ["default-\(mainRevision)"])
        XCTAssertEqual(toMain.first?.payload["data"]?["environment"]?.stringValue, "default")
        // Unfiltered: both, in revision order, each naming its environment.
        let toAll = try receiver.delivered("all")
        XCTAssertEqual(toAll.map(\.id), ["staging-\(stagedRevision)", "default-\(mainRevision)"])
        XCTAssertEqual(toAll.compactMap { $0.payload["data"]?["environment"]?.stringValue }, ["staging", "default"])
        // The backlog counts only what a hook covers.
        XCTAssertTrue(try eventually(within: 5) {
            try ["staging", "main", "all"].allSatisfy { try self.hook(server, $0)?["backlog"]?.intValue == 0 }
        })
        XCTAssertEqual(try hook(server, "staging")?["lastDelivered"]?.intValue, stagedRevision)
        XCTAssertEqual(try hook(server, "staging")?["environments"], ["staging"])
        XCTAssertEqual(try hook(server, "all")?["environments"], .null)
    }

    func test_500s_and_timeouts_are_retried_with_the_same_id_and_keep_the_order() throws {
        try receiver.script("flaky", [500, "hang", 503, 200])
        let server = try server([(name: "flaky", extra: [:])])
        let first = try XCTUnwrap(server.put("age", 50).value?["revision"]?.intValue)
        let second = try XCTUnwrap(server.put("age", 51).value?["revision"]?.intValue)
        XCTAssertTrue(try eventually(within: 20) { try receiver.delivered("flaky").count >= 2 },
                      "attempts: \((try? receiver.attempts("flaky").map { "\($0.id):\($0.answered ?? 0)" }) ?? []); log:\n\(server.log)")
        let attempts = try receiver.attempts("flaky")
        XCTAssertEqual(attempts.map(\.id), ["default-\(first)", "default-\(first)", "default-\(first)", "default-\(first)", "default-\(second)"])
        XCTAssertEqual(attempts.map(\.answered), [500, nil, 503, 200, 200])
        XCTAssertTrue(attempts.allSatisfy(\.verified))
        let status = try XCTUnwrap(try hook(server, "flaky"))
        XCTAssertEqual(status["lastError"], .null)
        XCTAssertEqual(status["lastDelivered"]?.intValue, second)
        let metrics = MetricSamples.parse(try server.get("/metrics").text)
        XCTAssertEqual(metrics[#"tidings_webhook_deliveries_total{hook="flaky",outcome="failed"}"#], 3)
    }

    func test_410_disables_the_hook_and_retry_sends_its_backlog() throws {
        try receiver.script("gone", [410])
        let server = try server([(name: "gone", extra: [:])])
        let first = try XCTUnwrap(server.put("age", 60).value?["revision"]?.intValue)
        XCTAssertTrue(try eventually(within: 10) { try hook(server, "gone")?["state"]?.stringValue == "disabled" })
        let second = try XCTUnwrap(server.put("age", 61).value?["revision"]?.intValue)
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(try receiver.attempts("gone").count, 1, "a disabled hook is sent nothing")
        let status = try XCTUnwrap(try hook(server, "gone"))
        XCTAssertEqual(status["backlog"]?.intValue, 2)
        XCTAssertEqual(status["lastError"]?.stringValue,
                       "the receiver answered 410 Gone: the hook is disabled until POST /webhooks/gone/retry")

        let retry = try server.request("POST", "/webhooks/gone/retry")
        XCTAssertEqual(retry.status, 202, retry.text)
        XCTAssertEqual(retry.value?["state"]?.stringValue, "active")
        XCTAssertTrue(try eventually(within: 10) { try receiver.delivered("gone").count >= 2 })
        XCTAssertEqual(try receiver.delivered("gone").map(\.revision), [first, second])
        XCTAssertEqual(try server.request("POST", "/webhooks/nope/retry").status, 404)
    }

    func test_private_addresses_are_refused_without_the_flag_also_by_name() throws {
        let byName = receiver.url(for: "named").replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let server = try server([(name: "loopback", extra: [:]), (name: "named", extra: ["url": byName])], allowPrivate: false)
        XCTAssertEqual(try server.put("age", 70).status, 200)
        XCTAssertTrue(try eventually(within: 10) {
            try ["loopback", "named"].allSatisfy { try hook(server, $0)?["lastError"]?.stringValue?.contains("loopback") ?? false }
        }, (try? server.get("/webhooks").text) ?? "")
        XCTAssertEqual(try receiver.attempts().count, 0, "nothing reached the receiver")
        XCTAssertEqual(try hook(server, "loopback")?["backlog"]?.intValue, 1, "the record waits")
        XCTAssertNotEqual(try hook(server, "loopback")?["nextAttempt"], .null)
        let refused = MetricSamples.parse(try server.get("/metrics").text)[#"tidings_webhook_deliveries_total{hook="loopback",outcome="refused"}"#]
        XCTAssertGreaterThanOrEqual(refused ?? 0, 1, "a refusal is counted")
    }

    func test_a_receiver_that_never_answers_slows_neither_writes_nor_streams() throws {
        try receiver.script("stuck", Array(repeating: "hang", count: 50))
        // Attempts of the full 10 s, so one is always under way while the writes run.
        let server = try server([(name: "stuck", extra: [:])], environment: ["TIDINGS_TEST_WEBHOOK_BACKOFF": "0.1"])
        XCTAssertEqual(try server.put("age", 1).status, 200)
        XCTAssertTrue(try eventually(within: 5) { try receiver.attempts("stuck").count == 1 })
        let stream = try server.openEventStream("/preferences/age/events")
        _ = try stream.nextEvent()
        var slowest = 0.0
        let started = Date()
        for age in 2...41 {
            let begin = Date()
            XCTAssertEqual(try server.put("age", age).status, 200)
            XCTAssertEqual(try stream.nextEvent(timeout: 2).value?["value"]?.intValue, age)
            slowest = max(slowest, Date().timeIntervalSince(begin))
        }
        let total = Date().timeIntervalSince(started)
        print("40 writes and their events with a hook hanging: \(Int(total * 1000)) ms, slowest \(Int(slowest * 1000)) ms")
        XCTAssertLessThan(slowest, 1.0)
        XCTAssertLessThan(total, 8.0, "the writes finished before the hanging attempt's 10 s deadline")
        XCTAssertEqual(try receiver.attempts("stuck").count, 1, "still the first attempt, held by the receiver")
        XCTAssertEqual(try hook(server, "stuck")?["backlog"]?.intValue, 41)
    }

    func test_a_SIGKILL_of_the_sender_loses_no_delivery() throws {
        let directory = TidingsProcess.temporaryDirectory()
        addTeardownBlock { TidingsProcess.removeDirectory(directory) }
        try receiver.script("durable", [], delay: 0.05)
        let first = try server([(name: "durable", extra: [:])], dataDirectory: directory)
        var revisions: [Int] = []
        for age in 1...30 { revisions.append(try XCTUnwrap(first.put("age", age).value?["revision"]?.intValue)) }
        XCTAssertTrue(try eventually(within: 10) { try receiver.delivered("durable").count >= 5 })
        first.stop(signal: SIGKILL)
        let sentBefore = try receiver.delivered("durable").count
        XCTAssertLessThan(sentBefore, 30, "the kill came while a backlog was waiting")

        let second = try server([(name: "durable", extra: [:])], dataDirectory: directory)
        XCTAssertTrue(try eventually(within: 20) { Set(try receiver.delivered("durable").compactMap(\.revision)).isSuperset(of: revisions) },
                      "log:\n\(second.log)")
        let order = try receiver.delivered("durable").compactMap(\.revision)
        var firstSeen: [Int] = []
        for revision in order where !firstSeen.contains(revision) { firstSeen.append(revision) }
        XCTAssertEqual(firstSeen, revisions, "in revision order (a delivery cut by the kill may come again)")
        XCTAssertLessThanOrEqual(order.count - revisions.count, 2, "at most the delivery under way is repeated")
        XCTAssertTrue(try receiver.attempts("durable").allSatisfy(\.verified))
    }

    func test_a_bad_file_stops_start_up_and_a_bad_reload_keeps_the_hooks() throws {
        let bad = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID().uuidString).json")
        try Data(#"[{"name": "x", "url": "ftp://example.com/", "secret": "whsec_c2hvcnQ="}]"#.utf8).write(to: bad)
        addTeardownBlock { try? FileManager.default.removeItem(at: bad) }
        XCTAssertThrowsError(try TidingsProcess(arguments: ["--webhooks", bad.path])) { error in
            let failure = error as? TidingsProcess.StartError
            XCTAssertEqual(failure?.status, 1, "\(error)")
            XCTAssertEqual(LogLine.parse(failure?.log ?? "").last.map { [$0.level, $0.message] },
                           ["critical", "invalid --webhooks file \(bad.path): entry 1 (x): \"url\" must be an absolute http or https URL with a host"],
                           "\(error)")
        }

        let file = try receiver.file([(name: "kept", extra: [:])])
        let server = try TidingsProcess(arguments: ["--webhooks", file.path, "--webhook-allow-private"], environment: Self.fastClocks)
        addTeardownBlock { server.stop() }
        try Data("[{".utf8).write(to: file)
        server.signal(SIGHUP)
        let kept = "kept the previous webhooks: invalid --webhooks file \(file.path): not JSON (expected an array of {\"name\", \"url\", \"secret\"})"
        XCTAssertTrue(eventually(within: 5) { LogLine.parse(server.log).contains { $0.level == "error" && $0.message == kept } }, server.log)
        XCTAssertEqual(try server.put("age", 90).status, 200)
        XCTAssertTrue(try eventually(within: 10) { try receiver.delivered("kept").count == 1 })

        // A good reload: the new hook starts from the current revision.
        let next = try receiver.file([(name: "kept", extra: [:]), (name: "added", extra: ["topics": ["things"]])])
        try FileManager.default.removeItem(at: file)
        try FileManager.default.moveItem(at: next, to: file)
        server.signal(SIGHUP)
        XCTAssertTrue(try eventually(within: 5) { try hook(server, "added") != nil }, server.log)
        XCTAssertEqual(try server.put("age", 91).status, 200)
        XCTAssertEqual(try server.post(thing: "ftw").status, 201)
        XCTAssertTrue(try eventually(within: 10) { try receiver.delivered("kept").count == 3 && receiver.delivered("added").count == 1 })
        XCTAssertEqual(try receiver.delivered("added").first?.payload["data"]?["topic"]?.stringValue, "things")
    }
}
