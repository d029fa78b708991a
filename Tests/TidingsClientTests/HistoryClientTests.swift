import Foundation
import TestFixtures
import Observing
import TidingsClient
import XCTest

/// The client's history and rollback, in the library and in `tidings-client`, against the real
/// server.
@MainActor
final class HistoryClientTests: XCTestCase {
    private var directories: [URL] = []

    override func tearDown() async throws {
        directories.forEach(TidingsProcess.removeDirectory)
    }

    private func startServer(_ arguments: [String] = []) throws -> TidingsProcess {
        let directory = TidingsProcess.temporaryDirectory()
        directories.append(directory)
        return try TidingsProcess(arguments: arguments, dataDirectory: directory)
    }

    func testHistoryPagesAndRollbackThroughTheLibrary() async throws {
        let server = try startServer(["--api-token", "tok"])
        let client = TidingsClient(url: server.url, credentials: .bearer("tok"))
        _ = try await client.preferences.set(.integer(6), forKey: "age")          // 1
        _ = try await client.preferences.set(.string("bob"), forKey: "name")      // 2
        _ = try await client.things.add("yolo")                                   // 3
        _ = try await client.preferences.set(.integer(9), forKey: "age")          // 4

        let page = try await client.history(limit: 3)
        XCTAssertEqual(page.changes.map(\.revision), [4, 3, 2])
        XCTAssertEqual(page.next, "/history?before=2&limit=3")
        XCTAssertEqual(page.changes[0].before, .number(6))
        XCTAssertEqual(page.changes[0].after, .number(9))
        XCTAssertEqual(page.changes[0].actor, "api")
        XCTAssertEqual(page.changes[1].op, "add")
        XCTAssertEqual(page.changes[1].after, .string("YOLO"))
        let age = try await client.history(.preference("age"), after: 0)
        XCTAssertEqual(age.changes.map(\.revision), [1, 4])

        let result = try await client.rollbackPreferences(to: 1, keys: ["age", "name"], reason: "too far")
        XCTAssertEqual(result.changes.map(\.key), ["name", "age"])
        XCTAssertEqual(result.changes.map(\.reason), ["too far", "too far"])
        let record = try await client.preferences.fetch("age")
        XCTAssertEqual(record.value, .integer(6))
        let nothing = try await client.rollbackPreferences(to: 1, keys: ["age"])
        XCTAssertEqual(nothing.changes, [])
        do {
            _ = try await client.rollbackThings(to: 0, ifRevision: 1)
            XCTFail("If-Match on an old revision")
        } catch TidingsClientError.conflict {
        }
        let things = try await client.rollbackThings(to: 0)
        XCTAssertEqual(things.changes.first?.after, .list([]))
        XCTAssertEqual(things.changes.first?.reason, "rollback to 0")
    }

    func testTheCommandPrintsHistoryAndRollsBack() async throws {
        let server = try startServer()
        let url = server.url.absoluteString
        XCTAssertEqual(try run(["--url", url, "set", "age", "6"]).0, 0)
        XCTAssertEqual(try run(["--url", url, "set", "age", "7"]).0, 0)
        let (status, output, errors) = try run(["--url", url, "history", "--key", "age"])
        XCTAssertEqual(status, 0, errors)
        let lines = output.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        XCTAssertEqual(lines.map { $0?["revision"] as? Int }, [2, 1])
        XCTAssertEqual(lines.first??["after"] as? Int, 7)
        let back = try run(["--url", url, "rollback", "1", "--reason", "oops"])
        XCTAssertEqual(back.0, 0, back.2)
        XCTAssertTrue(ApplyCommandTests.jsonLines(back.1).contains { $0["reason"] as? String == "oops" }, back.1)
        XCTAssertEqual(try run(["--url", url, "get", "age"]).1, "6\n")
        let future = try run(["--url", url, "rollback", "99"])
        XCTAssertEqual(future.0, 1)
        XCTAssertEqual(ClientRefusal(future.2)?.status, 422, future.2)
    }

    private func run(_ arguments: [String]) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = TidingsProcess.binDirectory.appendingPathComponent("tidings-client")
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }
}
