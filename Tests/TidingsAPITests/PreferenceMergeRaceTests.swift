import EventHTTP
import Foundation
import HTTPTypes
import TestFixtures
import TidingsStore
import XCTest
@testable import TidingsAPI

/// `PATCH /preferences` merges an object onto the value the key has when the write commits, not
/// the one this instance happened to hold: another instance's write to the same object that
/// this instance has not applied yet is kept (the store refuses the merge made on the older
/// value; it is made again on the newer one). In-process, the real application over a SQLite
/// directory that a second store (another instance) writes to.
@MainActor
final class PreferenceMergeRaceTests: XCTestCase {
    private var directory: URL!

    override func setUp() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("merge-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(at: directory)
    }

    func test_a_merge_never_undoes_another_instances_write_to_the_same_object() async throws {
        let file = directory.appendingPathComponent("prefs.json")
        try Data(#"{"theme": {"type": "object", "default": {"color": "red", "size": 3}, "properties": {"color": {"type": "string"}, "size": {"type": "integer"}}}}"#.utf8)
            .write(to: file)
        var configuration = TidingsConfiguration()
        configuration.dataDir = directory.appendingPathComponent("data").path
        configuration.preferencesFile = file.path
        configuration.feedRefresh = 0
        let app = try TidingsApplication(configuration: configuration, loop: try EventLoop())
        app.markReady()
        let other = try SQLiteStore(directory: directory.appendingPathComponent("data"))
        // Several rounds: another instance sets the size, and at once this one merges a colour
        // onto the object it holds (which may not show that size yet).
        for (round, colour) in ["blue", "green", "red", "blue", "green"].enumerated() {
            let size = 10 + round
            _ = try await other.commit(StoreWrite([.setPreference(key: "theme", json: #"{"color":"red","size":\#(size)}"#,
                                                                  defaultJSON: #"{"color":"red","size":3}"#)]))
            let answer = await app.router.respond(to: Request(
                method: .patch, target: "/preferences", headers: [.contentType: "application/json"],
                body: Array(#"{"theme": {"color": "\#(colour)"}}"#.utf8)))
            let response = try XCTUnwrap(answer.response)
            XCTAssertEqual(response.status, .ok, String(decoding: response.body, as: UTF8.self))
            XCTAssertEqual(JSONValue.parse(response.body)?["theme"], ["color": .string(colour), "size": .number(Double(size))],
                           "round \(round): the other instance's size was undone")
        }
        await other.close()
    }
}
