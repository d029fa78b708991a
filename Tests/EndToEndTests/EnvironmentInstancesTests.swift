import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// Environments across processes (API.md "Environments", issue 31): the real binary over real
/// HTTP, two instances on one SQLite data directory and two on one PostgreSQL, each pair through
/// one scenario — an environment created on A is there on B at once; a write in `staging` reaches
/// `staging`'s streams on both and never `default`'s; resume by `Last-Event-ID` per environment
/// with no gap and no duplicate; as-of reads and rollback per environment; promote, dry-run and
/// real, with `If-Match`; a credential scoped to `staging` refused everywhere else, streams,
/// tickets and OpenFeature included; deleting ends the environment's streams with `reset`.
/// Routes one by one: `TidingsAPITests.EnvironmentRoutesTests` (in-process).
final class EnvironmentInstancesTests: XCTestCase {
    private static let api = ["Authorization": "Bearer env-api-secret-1"]
    private static let stager = ["Authorization": "Bearer env-staging-secret-1"]

    /// `--read-token` (so streams need a credential and tickets count) and a `--tokens` file with
    /// a writer limited to `staging`.
    private func arguments(_ directory: TemporaryDirectory) throws -> [String] {
        let tokens = try directory.file("tokens.json", """
            [{"name": "stager", "role": "write", "token": "env-staging-secret-1", "environments": ["staging"]}]
            """)
        return ["--api-token", "env-api-secret-1", "--read-token", "env-read-secret-1", "--tokens", tokens]
    }

    func test_two_instances_on_SQLite() throws {
        let directory = try TemporaryDirectory()
        let data = directory.url.appendingPathComponent("data")
        let arguments = try arguments(directory)
        let a = try TidingsProcess(arguments: arguments, dataDirectory: data)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments, dataDirectory: data)
        defer { b.stop() }
        try scenario(a, b)
    }

    func test_two_instances_on_PostgreSQL() throws {
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let directory = try TemporaryDirectory()
        let arguments = try arguments(directory) + ["--database-url", cluster.url]
        let a = try TidingsProcess(arguments: arguments)
        defer { a.stop() }
        let b = try TidingsProcess(arguments: arguments)
        defer { b.stop() }
        try scenario(a, b)
    }

    // MARK: The scenario

    private func scenario(_ a: TidingsProcess, _ b: TidingsProcess) throws {
        let api = Self.api
        // Created on A, listed on B at once (B reads the store, it does not wait for its change
        // watch), and gone from A's list at once when deleted on B; several times, so a change
        // watch that happens to be quick (PostgreSQL's NOTIFY) does not hide a list that lags.
        for round in 1...4 {
            let name = "listed-\(round)"
            XCTAssertEqual(try a.request("PUT", "/environments/\(name)", headers: api).status, 201)
            XCTAssertTrue(try environmentNames(b).contains(name), "round \(round): B's list lacks \(name)")
            XCTAssertEqual(try b.request("DELETE", "/environments/\(name)", headers: api).status, 200)
            XCTAssertFalse(try environmentNames(a).contains(name), "round \(round): A's list still has \(name)")
        }
        // Created on A, there on B at once — reads and streams — not 404 while A's change travels.
        XCTAssertEqual(try a.request("PUT", "/environments/staging", headers: api).status, 201)
        XCTAssertEqual(try b.get("/environments/staging/preferences/age", headers: api).status, 200)
        let start = try a.currentRevision()
        let resume = ["Last-Event-ID": String(start)].merging(api) { $1 }
        let stagingOnB = try b.openEventStream("/environments/staging/events?topics=preferences,things", headers: resume)
        XCTAssertEqual(stagingOnB.reply.status, 200, stagingOnB.reply.text)
        let stagingOnA = try a.openEventStream("/environments/staging/events?topics=preferences,things", headers: resume)
        let defaultOnA = try a.openEventStream("/events?topics=preferences,things", headers: resume)
        let defaultOnB = try b.openEventStream("/events?topics=preferences,things", headers: resume)

        // A write in staging reaches staging's streams on both, and default's on neither: the next
        // event they see is default's own later write.
        let s1 = try revision(of: a.request("PUT", "/environments/staging/preferences/age", headers: api, json: ["value": 41]))
        for stream in [stagingOnA, stagingOnB] {
            let event = try stream.nextEvent(timeout: 5)
            XCTAssertEqual(event.id, String(s1))
            XCTAssertEqual(event.value?["value"], 41)
        }
        let d1 = try revision(of: b.put("age", 7, headers: api))
        for stream in [defaultOnA, defaultOnB] {
            let event = try stream.nextEvent(timeout: 5)
            XCTAssertEqual(event.id, String(d1), "a default stream saw \(event)")
            XCTAssertEqual(event.value?["value"], 7)
        }
        XCTAssertEqual(try b.get("/preferences/age", headers: api).value?["value"], 7)
        XCTAssertEqual(try a.get("/environments/staging/preferences/age", headers: api).value?["value"], 41)

        // Interleaved writes through both; resume staging on B from s1: exactly the staging ones after it.
        let s2 = try revision(of: b.request("PUT", "/environments/staging/preferences/age", headers: api, json: ["value": 42]))
        let d2 = try revision(of: a.put("age", 8, headers: api))
        let s3 = try revision(of: a.request("POST", "/environments/staging/things", headers: api, json: ["thing": "brb"]))
        XCTAssertEqual(try b.request("POST", "/environments/staging/things", headers: api, json: ["thing": "brb"]).status, 409)
        XCTAssertTrue(s1 < d1 && d1 < s2 && s2 < d2 && d2 < s3)
        XCTAssertEqual(try stagingOnB.nextEvents(2, timeout: 5).map(\.id), [String(s2), String(s3)])
        let resumed = try b.openEventStream("/environments/staging/events?topics=preferences,things",
                                            headers: ["Last-Event-ID": String(s1)].merging(api) { $1 })
        let replay = try resumed.nextEvents(2, timeout: 5)
        XCTAssertEqual(replay.map(\.id), [String(s2), String(s3)])
        XCTAssertEqual(replay.map(\.name), ["preference", "things"])
        for stream in [defaultOnA, defaultOnB] { XCTAssertEqual(try stream.nextEvent(timeout: 5).id, String(d2)) }

        // As of s1 in staging (on B): age 41, no things; default as of the same revision: its own value.
        XCTAssertEqual(try b.get("/environments/staging/preferences/age?asOf=\(s1)", headers: api).value?["value"], 41)
        XCTAssertEqual(try b.get("/environments/staging/things?asOf=\(s1)", headers: api).value?["things"]?.strings, [])
        XCTAssertEqual(try b.get("/preferences/age?asOf=\(s1)", headers: api).value?["value"], 5)
        // Rollback of staging to s1 through A, conditional on the global revision: only staging moves.
        let current = try a.currentRevision()
        XCTAssertEqual(try a.request("POST", "/environments/staging/preferences/rollback",
                                     headers: ["If-Match": "\"\(current - 1)\""].merging(api) { $1 }, json: ["revision": s1]).status, 412)
        let rolledBack = try a.request("POST", "/environments/staging/preferences/rollback",
                                       headers: ["If-Match": "\"\(current)\""].merging(api) { $1 }, json: ["revision": s1])
        XCTAssertEqual(rolledBack.status, 200, rolledBack.text)
        let r1 = try XCTUnwrap(rolledBack.value?["changes"]?[0]?["revision"]?.intValue)
        let rollbackEvent = try stagingOnB.nextEvent(timeout: 5)
        XCTAssertEqual(rollbackEvent.id, String(r1))
        XCTAssertEqual(rollbackEvent.value?["value"], 41)
        XCTAssertEqual(try b.get("/preferences/age", headers: api).value?["value"], 8)

        // Promote staging's age into default: the dry run writes nothing; a stale If-Match is 412;
        // the real one reaches default's streams on both instances, and nothing of staging's.
        let beforePromote = try b.currentRevision()
        let dryRun = try b.request("POST", "/environments/default/promote?dryRun=true", headers: api,
                                   json: ["from": "staging", "keys": ["age"], "things": true])
        XCTAssertEqual(dryRun.status, 200, dryRun.text)
        XCTAssertEqual(dryRun.value?["changes"], [["key": "age", "before": 8, "after": 41]])
        XCTAssertEqual(dryRun.value?["things"], ["before": [], "after": ["BRB"]])
        XCTAssertEqual(try b.currentRevision(), beforePromote)
        let stale = try b.request("POST", "/environments/default/promote",
                                  headers: ["If-Match": "\"\(beforePromote - 1)\""].merging(api) { $1 }, json: ["from": "staging", "keys": ["age"]])
        XCTAssertEqual(stale.status, 412, stale.text)
        let promoted = try b.request("POST", "/environments/default/promote",
                                     headers: ["If-Match": "\"\(beforePromote)\""].merging(api) { $1 }, json: ["from": "staging", "keys": ["age"]])
        XCTAssertEqual(promoted.status, 200, promoted.text)
        let p1 = try XCTUnwrap(promoted.value?["changes"]?[0]?["revision"]?.intValue)
        XCTAssertEqual(promoted.value?["changes"]?[0]?["reason"], "promote from staging")
        XCTAssertEqual(promoted.value?["changes"]?[0]?["environment"], "default")
        for stream in [defaultOnA, defaultOnB] {
            let event = try stream.nextEvent(timeout: 5)
            XCTAssertEqual(event.id, String(p1), "\(event)")
            XCTAssertEqual(event.value?["value"], 41)
        }
        XCTAssertEqual(try a.get("/preferences/age", headers: api).value?["value"], 41)
        XCTAssertEqual(try a.get("/things", headers: api).value?["things"]?.strings, [])

        try scopedCredential(a, b)

        // Deleting staging through B ends its streams on both instances with `reset`, and the
        // environment is gone on both; default's streams go on.
        let deleted = try b.request("DELETE", "/environments/staging", headers: api)
        XCTAssertEqual(deleted.status, 200, deleted.text)
        for stream in [stagingOnA, stagingOnB] {
            XCTAssertEqual(try nextEvent(named: "reset", on: stream).name, "reset")
        }
        XCTAssertTrue(eventually { (try? a.get("/environments/staging", headers: api).status) == 404 })
        XCTAssertEqual(try b.get("/environments/staging/preferences", headers: api).status, 404)
        let d3 = try revision(of: a.put("age", 9, headers: api))
        XCTAssertEqual(try defaultOnB.nextEvent(timeout: 5).id, String(d3))
    }

    /// The names `GET /environments` lists on `server`.
    private func environmentNames(_ server: TidingsProcess) throws -> [String] {
        let reply = try server.get("/environments", headers: Self.api)
        XCTAssertEqual(reply.status, 200, reply.text)
        return reply.value?["environments"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
    }

    /// A credential limited to `staging`: everything of `default` is 403 — reads, streams,
    /// tickets, OpenFeature, promoting — and staging's work, also with a ticket.
    private func scopedCredential(_ a: TidingsProcess, _ b: TidingsProcess) throws {
        let stager = Self.stager
        XCTAssertEqual(try a.get("/environments/staging/preferences", headers: stager).status, 200)
        XCTAssertEqual(try b.get("/preferences", headers: stager).status, 403)
        XCTAssertEqual(try b.openEventStream("/events", headers: stager).reply.status, 403)
        XCTAssertEqual(try a.openEventStream("/ofrep/v1/events", headers: stager).reply.status, 403)
        XCTAssertEqual(try a.request("POST", "/ofrep/v1/evaluate/flags", headers: stager, json: [String: Any]()).status, 403)
        XCTAssertEqual(try a.request("POST", "/environments/staging/ofrep/v1/evaluate/flags", headers: stager,
                                     json: [String: Any]()).status, 200)
        XCTAssertEqual(try b.request("POST", "/stream-tickets", headers: stager).status, 403)
        XCTAssertEqual(try b.request("POST", "/environments/default/promote", headers: stager, json: ["from": "staging"]).status, 403)
        XCTAssertEqual(try b.request("PUT", "/environments/dev", headers: stager).status, 403)
        // A ticket it takes for staging opens staging's stream, and not default's (a ticket is its
        // instance's: one use, in memory).
        let ticket = { () throws -> String in
            let reply = try a.request("POST", "/environments/staging/stream-tickets", headers: stager)
            XCTAssertEqual(reply.status, 201, reply.text)
            return try XCTUnwrap(reply.value?["ticket"]?.stringValue)
        }
        XCTAssertEqual(try a.openEventStream("/events?ticket=\(try ticket())").reply.status, 403)
        let stream = try a.openEventStream("/environments/staging/events?topics=preferences&keys=age&ticket=\(try ticket())")
        XCTAssertEqual(stream.reply.status, 200)
        XCTAssertEqual(try stream.nextEvent(timeout: 5).value?["value"], 41)
    }

    // MARK: Helpers

    private func revision(of reply: HTTPReply, file: StaticString = #filePath, line: UInt = #line) throws -> UInt64 {
        XCTAssertTrue((200..<300).contains(reply.status), reply.text, file: file, line: line)
        let revision = try XCTUnwrap(reply.value?["revision"]?.intValue, reply.text, file: file, line: line)
        return UInt64(revision)
    }

    /// The next event called `name`, skipping others (a deleted environment's stream may carry
    /// the changes before its end).
    private func nextEvent(named name: String, on stream: EventStreamReader) throws -> StreamEvent {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let event = try stream.nextEvent(timeout: 5)
            if event.name == name { return event }
        }
        throw MissingEvent(name: name)
    }

    private struct MissingEvent: Error {
        let name: String
    }
}
