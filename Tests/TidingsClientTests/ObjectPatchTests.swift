import Foundation
import Observing
import TestFixtures
import TidingsClient
import XCTest

/// The client's write of several keys at once is one `PATCH`, which the server reads as a merge
/// patch (an object preference's members merged onto its value): an object written that way still
/// ends as the value written — the client sends the members it drops as null.
@MainActor
final class ObjectPatchTests: XCTestCase {
    private var directories: [URL] = []

    override func tearDown() async throws {
        directories.forEach(TidingsProcess.removeDirectory)
    }

    func testAnObjectWrittenWithAnotherKeyEndsAsWrittenNotMerged() async throws {
        let directory = TidingsProcess.temporaryDirectory()
        directories.append(directory)
        let file = directory.appendingPathComponent("prefs.json")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(#"""
            {"theme": {"type": "object", "default": {"color": "red", "size": 3, "layout": {"dense": false, "rows": 2}},
                       "properties": {"color": {"type": "string"}, "size": {"type": "integer"},
                                      "layout": {"type": "object", "properties": {"dense": {"type": "boolean"}, "rows": {"type": "integer"}}}}},
             "age": {"type": "integer", "default": 5}}
            """#.utf8).write(to: file)
        let server = try TidingsProcess(arguments: ["--preferences", file.path], dataDirectory: directory.appendingPathComponent("data"))
        let client = await connectedClient(server)
        let written = PreferenceValue.object(PreferenceObject(["color": .string("blue"), "layout": .object(PreferenceObject(["dense": .boolean(true)]))]))
        try client.preferences.write(["theme": written, "age": .integer(8)])
        // The server announces both keys of the one PATCH (atomic): once age is here, so is theme.
        await eventually("the write applied") { client.preferences.value(forKey: "age") == .integer(8) }
        XCTAssertEqual(try server.get("/preferences/theme").value?["value"], ["color": "blue", "layout": ["dense": true]],
                       "size and layout.rows were left from the old value")
        XCTAssertEqual(try server.get("/preferences/age").value?["value"], 8)
    }
}
