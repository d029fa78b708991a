import Foundation
import TestFixtures
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
}
