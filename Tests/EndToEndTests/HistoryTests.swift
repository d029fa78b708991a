import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// History on the real binary (API.md "History"), on SQLite and on PostgreSQL: named
/// credentials from `--tokens` and their SIGHUP reload, `Tidings-Reason`, a bad tokens file at
/// start-up, a rollback through one instance seen on another's streams, and history and state
/// that agree after a SIGKILL under writes. Retention and the audit stream run in-process
/// (`TidingsAPITests.HistoryRetentionRoutesTests`).
final class HistoryTests: XCTestCase {
    private func tokensFile(_ entries: [[String: String]], in directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("tokens-\(UUID().uuidString).json")
        try JSONSerialization.data(withJSONObject: entries).write(to: url)
        return url
    }

    private func records(_ server: TidingsProcess, _ target: String, token: String) throws -> [[String: Any]] {
        let reply = try server.get(target, headers: token.isEmpty ? [:] : ["Authorization": "Bearer \(token)"])
        XCTAssertEqual(reply.status, 200, reply.text)
        return reply.json?["changes"] as? [[String: Any]] ?? []
    }

    /// Named tokens, a reason, and SIGHUP, on whichever store `extra` selects.
    private func checkNamedTokensAndReload(_ extra: [String]) throws {
        let directory = try TemporaryDirectory()
        let file = try tokensFile([["name": "deploy-bot", "role": "write", "token": "bot-secret-1"],
                                   ["name": "auditor", "role": "read", "token": "auditor-secret"]], in: directory.url)
        let server = try TidingsProcess(arguments: ["--api-token", "admin-secret", "--tokens", file.path] + extra)
        defer { server.stop() }
        let put = try server.put("age", 6, headers: ["Authorization": "Bearer bot-secret-1", "Tidings-Reason": "canary 10%"])
        XCTAssertEqual(put.status, 200, put.text)
        XCTAssertEqual(try server.put("age", 7, headers: ["Authorization": "Bearer auditor-secret"]).status, 401,
                       "a read credential does not write while write credentials exist")
        let long = String(repeating: "x", count: 257)
        XCTAssertEqual(try server.put("age", 8, headers: ["Authorization": "Bearer admin-secret", "Tidings-Reason": long]).status, 422)
        XCTAssertEqual(try server.put("age", 9, headers: ["Authorization": "Bearer admin-secret"]).status, 200)
        var history = try records(server, "/history", token: "auditor-secret")
        XCTAssertEqual(history.map { $0["actor"] as? String }, ["api", "deploy-bot"])
        XCTAssertEqual(history.last?["reason"] as? String, "canary 10%")

        // SIGHUP: the new file's credentials replace the old ones.
        try JSONSerialization.data(withJSONObject: [["name": "deploy-bot-2", "role": "write", "token": "bot-secret-2"],
                                                    ["name": "auditor", "role": "read", "token": "auditor-secret"]]).write(to: file)
        XCTAssertEqual(kill(server.pid, SIGHUP), 0)
        XCTAssertTrue(try eventually(within: 10) {
            try server.put("age", 10, headers: ["Authorization": "Bearer bot-secret-2"]).status == 200
        }, "the reloaded credential is taken")
        XCTAssertEqual(try server.put("age", 11, headers: ["Authorization": "Bearer bot-secret-1"]).status, 401)
        // A bad file on SIGHUP keeps the credentials in force and says why (never a token).
        try Data(#"[{"name": "no good", "role": "write", "token": "bot-secret-3"}]"#.utf8).write(to: file)
        XCTAssertEqual(kill(server.pid, SIGHUP), 0)
        XCTAssertTrue(eventually(within: 10) { LogLine.parse(server.log).contains { $0.message.components(separatedBy: ": ").first == "kept the previous credentials" } }, server.log)
        XCTAssertEqual(try server.put("age", 12, headers: ["Authorization": "Bearer bot-secret-2"]).status, 200)
        history = try records(server, "/preferences/age/history?limit=2", token: "auditor-secret")
        XCTAssertEqual(history.map { $0["actor"] as? String }, ["deploy-bot-2", "deploy-bot-2"])
        for secret in ["bot-secret-1", "bot-secret-2", "bot-secret-3", "auditor-secret", "admin-secret"] {
            // substring: a secret must appear nowhere in the log, in whatever field or message.
            XCTAssertFalse(server.log.contains(secret), "a token reached the log")
        }
    }

    func test_named_tokens_from_a_file_a_reason_and_SIGHUP_reload_on_SQLite() throws {
        try checkNamedTokensAndReload([])
    }

    func test_named_tokens_from_a_file_a_reason_and_SIGHUP_reload_on_PostgreSQL() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        try checkNamedTokensAndReload(["--database-url", cluster.url])
    }

    func test_a_bad_tokens_file_stops_start_up_with_a_clear_message() throws {
        let directory = try TemporaryDirectory()
        let file = try tokensFile([["name": "bot", "role": "owner", "token": "secret-in-file"]], in: directory.url)
        XCTAssertThrowsError(try TidingsProcess(arguments: ["--tokens", file.path])) { error in
            let text = String(describing: error)
            let critical = LogLine.parse((error as? TidingsProcess.StartError)?.log ?? "").filter { $0.level == "critical" }
            XCTAssertEqual(critical.map(\.message), ["invalid --tokens file \(file.path): entry 1 (bot): \"role\" must be \"read\" or \"write\""], text)
            // substring: the token must appear nowhere in what start-up prints.
            XCTAssertFalse(text.contains("secret-in-file"), text)
        }
    }

    func test_a_rollback_through_A_is_history_on_B_and_reaches_Bs_streams() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let a = try TidingsProcess(arguments: ["--database-url", cluster.url])
        let b = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { a.stop(); b.stop() }
        XCTAssertEqual(try a.put("age", 6).status, 200)            // 1
        XCTAssertEqual(try b.put("age", 7).status, 200)            // 2
        let stream = try b.openEventStream("/preferences/age/events")
        XCTAssertEqual(try stream.nextEvent().value?["value"], 7)
        let audit = try b.openEventStream("/events?topics=history")
        let rollback = try a.request("POST", "/preferences/rollback", headers: ["Tidings-Reason": "bad deploy"],
                                     json: ["revision": 1, "keys": ["age"]])
        XCTAssertEqual(rollback.status, 200, rollback.text)
        let event = try stream.nextEvent(timeout: 5)
        XCTAssertEqual(event.id, "3")
        XCTAssertEqual(event.value?["value"], 6)
        let record = try audit.nextEvent(timeout: 5)
        XCTAssertEqual(record.id, "3")
        XCTAssertEqual(record.json?["reason"] as? String, "bad deploy")
        XCTAssertEqual(record.json?["before"] as? Int, 7)
        let onB = try records(b, "/history?limit=1", token: "")
        XCTAssertEqual(onB.first?["revision"] as? Int, 3)
        XCTAssertEqual(onB.first?["after"] as? Int, 6)
        XCTAssertEqual(try records(a, "/history", token: "").count, 3, "the same history on every instance")
        XCTAssertEqual(try b.get("/preferences/age?asOf=2").value?["value"], 7)
    }

    /// SIGKILL while writes are in flight: after a restart, the history replayed from the
    /// start equals the state, and the as-of read at the current revision does too.
    func test_SIGKILL_during_writes_leaves_history_and_state_in_agreement() throws {
        let directory = try TemporaryDirectory()
        var server: TidingsProcess? = try TidingsProcess(dataDirectory: directory.url)
        let port = server!.port
        let writers = DispatchGroup()
        for worker in 0..<4 {
            DispatchQueue.global().async(group: writers) {
                guard let connection = try? HTTPConnection(port: port, timeout: 5) else { return }
                for n in 0..<10_000 {
                    let body: [String: Any] = worker % 2 == 0 ? ["age": n] : ["name": "w\(worker)-\(n)", "speed": Double(n)]
                    guard (try? connection.request("PATCH", "/preferences", json: body)) != nil else { return }
                }
            }
        }
        XCTAssertTrue(try eventually(within: 10) { try server!.currentRevision() > 200 })
        _ = server!.stop(signal: SIGKILL)
        writers.wait()
        server = try TidingsProcess(dataDirectory: directory.url)
        defer { server?.stop() }
        let restarted = try XCTUnwrap(server)
        let state = try XCTUnwrap(restarted.get("/preferences").json)
        let revision = try restarted.currentRevision()
        var replayed = try XCTUnwrap(restarted.get("/preferences?asOf=0").json)
        var after: UInt64 = 0
        while true {
            let page = try records(restarted, "/history?after=\(after)&limit=1000", token: "")
            for record in page {
                replayed[record["key"] as! String] = record["after"]
                after = UInt64(record["revision"] as! Int)
            }
            if page.isEmpty { break }
        }
        XCTAssertEqual(after, revision, "every revision is a record")
        XCTAssertEqual(NSDictionary(dictionary: replayed), NSDictionary(dictionary: state))
        let asOf = try XCTUnwrap(restarted.get("/preferences?asOf=\(revision)").json)
        XCTAssertEqual(NSDictionary(dictionary: asOf), NSDictionary(dictionary: state))
    }
}
