import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// The SQLite and the PostgreSQL store decide "no change" the same way: by the bytes of the
/// value. Before, SQLite compared with Swift's `String ==` (canonical equivalence) and answered
/// `cafe\u0301` over `café` as a no-op, while PostgreSQL stored it.
final class StoreAgreementTests: XCTestCase {
    /// What each write of the sequence answered: status, revision, value bytes.
    private func run(_ server: TidingsProcess) throws -> [String] {
        var answers: [String] = []
        for value in ["caf\u{00E9}", "cafe\u{0301}", "cafe\u{0301}", "caf\u{00E9}", "Tidings"] {
            let reply = try server.put("name", value)
            let stored = Array((reply.value?["value"]?.stringValue ?? "").utf8)
            answers.append("\(reply.status) \(reply.value?["revision"]?.intValue ?? -1) \(stored)")
        }
        let things = try server.put(things: ["CAF\u{00C9}"])
        let again = try server.put(things: ["CAFE\u{0301}"])   // NFC makes it the same thing: no change
        answers.append("\(things.status) \(again.status) \(again.value?["revision"]?.intValue == things.value?["revision"]?.intValue)")
        return answers
    }

    func test_SQLite_and_PostgreSQL_agree_on_canonically_equal_values() throws {
        let sqlite = try TidingsProcess()
        defer { sqlite.stop() }
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let postgres = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { postgres.stop() }

        let onSQLite = try run(sqlite)
        let onPostgres = try run(postgres)
        XCTAssertEqual(onSQLite, onPostgres)
        // Each different byte sequence took a revision; the repeated one did not.
        let revisions = onSQLite.prefix(5).map { Int($0.split(separator: " ")[1])! }
        XCTAssertEqual(revisions, [revisions[0], revisions[0] + 1, revisions[0] + 1, revisions[0] + 2, revisions[0] + 3], "\(onSQLite)")
    }

    /// A string preference holding U+0000 (and other control characters), sent escaped as JSON
    /// must send it: every store keeps it (as JSON text, escaped) and gives it back unchanged —
    /// in the answer, on a read, in the event, in the history, as of its revision, after a
    /// rollback — never a 5xx. Before, the rule was unwritten and the stores disagreed below it.
    private func controlCharacters(_ server: TidingsProcess) throws -> [JSONValue?] {
        let text = "a\u{0}b\u{1}\u{1F}"
        let stream = try server.openEventStream("/preferences/name/events")
        _ = try stream.nextEvent()
        let put = try server.request("PUT", "/preferences/name", contentType: "application/json",
                                     text: #"{"value": "a\u0000b\u0001\u001f"}"#)
        XCTAssertEqual(put.status, 200, put.text)
        let revision = try XCTUnwrap(put.value?["revision"]?.intValue)
        let patch = try server.request("PATCH", "/preferences", json: ["name": "\u{0}"])
        XCTAssertEqual(patch.status, 200, patch.text)
        let history = try server.get("/preferences/name/history?limit=1")
        XCTAssertEqual(history.status, 200, history.text)
        let asOf = try server.get("/preferences/name?asOf=\(revision)")
        XCTAssertEqual(asOf.status, 200, asOf.text)
        let rollback = try server.request("POST", "/preferences/rollback", json: ["revision": revision, "keys": ["name"]])
        XCTAssertEqual(rollback.status, 200, rollback.text)
        let answers = [
            put.value?["value"], try server.get("/preferences/name").value?["value"], try stream.nextEvent().value?["value"],
            patch.value?["name"], history.value?["changes"]?[0]?["before"], history.value?["changes"]?[0]?["after"],
            asOf.value?["value"], try server.get("/preferences/name").value?["value"],
        ]
        XCTAssertEqual(answers, [text, text, text, "\u{0}", text, "\u{0}", text, text].map { JSONValue.string($0) })
        return answers
    }

    func test_SQLite_and_PostgreSQL_keep_a_string_with_U0000_alike() throws {
        let sqlite = try TidingsProcess()
        defer { sqlite.stop() }
        let cluster = try PostgresCluster()
        defer { cluster.destroy() }
        let postgres = try TidingsProcess(arguments: ["--database-url", cluster.url])
        defer { postgres.stop() }

        let onSQLite = try controlCharacters(sqlite)
        let onPostgres = try controlCharacters(postgres)
        XCTAssertEqual(onSQLite, onPostgres)
    }
}
