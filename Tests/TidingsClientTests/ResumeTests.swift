import Foundation
import TestFixtures
import Observing
import OpenCombine
import TidingsClient
import XCTest

/// The stream across server restarts: resumed with `Last-Event-ID` (no change missed, none
/// repeated), and a `reset` when the server cannot resume.
@MainActor
final class ResumeTests: XCTestCase {
    private var directories: [URL] = []

    override func tearDown() async throws {
        directories.forEach(TidingsProcess.removeDirectory)
    }

    private func newDirectory() -> URL {
        let directory = TidingsProcess.temporaryDirectory()
        directories.append(directory)
        return directory
    }

    /// Each key's revisions strictly increase: nothing was announced twice or out of order.
    private func assertNoRepeats(_ changes: [PreferenceRecord], file: StaticString = #filePath, line: UInt = #line) {
        var last: [String: UInt64] = [:]
        for change in changes {
            if let previous = last[change.key] {
                XCTAssertGreaterThan(change.revision, previous, "\(change.key) announced again or out of order in \(changes)", file: file, line: line)
            }
            last[change.key] = change.revision
        }
    }

    private func put(_ server: TidingsProcess, _ key: String, _ json: String) async throws {
        let answer = try server.request("PUT", "/preferences/\(key)", headers: ["Content-Type": "application/json"],
                                        body: Array("{\"value\": \(json)}".utf8))
        XCTAssertEqual(answer.status, 200, answer.text)
    }

    private func reopened(_ states: Recorder<ConnectionState>) -> ([ConnectionState]) -> Bool {
        { values in
            guard let waiting = values.firstIndex(where: { if case .waiting = $0 { true } else { false } }) else { return false }
            return values[waiting...].contains(.open)
        }
    }

    func testAServerRestartedWhileTheClientRunsIsResumedWithNoMissedAndNoRepeatedChange() async throws {
        let directory = newDirectory()
        var server = try TidingsProcess(dataDirectory: directory)
        let port = server.port
        let client = await connectedClient(server)
        let settings = AppSettings(store: client.preferences)
        let changes = Recorder(client.preferences.changes)
        let states = Recorder(client.connectionState)
        let resets = Recorder(client.resets)
        try await put(server, "age", "6")
        await changes.waitForLatest("age 6") { $0.key == "age" && $0.value == .integer(6) }

        XCTAssertEqual(server.stop(), 0)
        await states.wait("the client noticing the restart") { $0.contains { if case .waiting = $0 { true } else { false } } }
        server = try TidingsProcess(dataDirectory: directory, port: port)
        // Written while the client is (most likely) still away: it must come by replay.
        try await put(server, "age", "7")
        try await put(server, "name", "\"after the restart\"")
        await states.wait("the stream reopened", until: reopened(states))
        try await put(server, "age", "8")
        await changes.waitForLatest("age 8") { $0.key == "age" && $0.value == .integer(8) }

        let ages = changes.values.filter { $0.key == "age" }.map(\.value)
        // Recorded from after the first snapshot: exactly the four changes, each once.
        XCTAssertEqual(ages, [.integer(6), .integer(7), .integer(8)])
        XCTAssertEqual(changes.values.filter { $0.key == "name" }.map(\.value), [.string("after the restart")])
        XCTAssertEqual(changes.values.count, 4, "\(changes.values)")
        assertNoRepeats(changes.values)
        XCTAssertEqual(resets.values, [], "the restarted server had every event the client needed")
        XCTAssertEqual(settings.age, 8)
        XCTAssertEqual(settings.name, "after the restart")
    }

    func testAResetFromAServerThatLostItsStoreBringsTheFreshSnapshot() async throws {
        var server = try TidingsProcess(dataDirectory: newDirectory())
        let port = server.port
        let client = await connectedClient(server)
        let settings = AppSettings(store: client.preferences)
        let ages = Recorder(Screen(settings).$age.publisher)
        let resets = Recorder(client.resets)
        try await put(server, "age", "6")
        try await put(server, "name", "\"old\"")
        await ages.waitForLatest("age 6") { $0 == 6 }
        await eventually("both changes seen") { client.resumeRevision == 2 }

        // A new server on the same port with an empty store: revision 0 < the client's 2.
        server.stop()
        server = try TidingsProcess(dataDirectory: newDirectory(), port: port)
        await resets.wait("the reset") { !$0.isEmpty }
        let reason = try XCTUnwrap(resets.values.first, "no reset")
        XCTAssertEqual(reason, "Last-Event-ID 2 is newer than the current revision 0")
        await ages.waitForLatest("the fresh snapshot's age") { $0 == 5 }
        await eventually("the fresh snapshot's name") { settings.name == "fat" }
        // Revisions count from 0 again, and the client follows them.
        try await put(server, "age", "9")
        await ages.waitForLatest("age 9 at revision 1") { $0 == 9 }
        XCTAssertEqual(client.preferences.revision(forKey: "age"), 1)
        XCTAssertEqual(ages.values, [5, 6, 5, 9])
    }

    func testAResumePointOlderThanTheReplayBufferResetsAndOnlyWhatChangedIsAnnounced() async throws {
        // Resume reaches as far back as the history: keep almost none of it (the replay bounds
        // are lower bounds, so they go down too).
        let server = try TidingsProcess(arguments: ["--replay-buffer", "2", "--replay-bytes", "100", "--history-bytes", "100"], dataDirectory: newDirectory())
        let client = await connectedClient(server)
        let changes = Recorder(client.preferences.changes)
        let resets = Recorder(client.resets)
        try await put(server, "age", "6")
        await changes.waitForLatest("age 6") { $0.value == .integer(6) }

        client.disconnect()
        for value in 7...10 { try await put(server, "age", String(value)) }
        try await put(server, "speed", "1.5")
        client.connect()
        await resets.wait("the reset") { !$0.isEmpty }
        let reason = try XCTUnwrap(resets.values.first, "no reset")
        XCTAssertEqual(reason, "events after 1 are no longer retained")
        await changes.waitForLatest("speed 1.5") { $0.key == "speed" && $0.value == .number(1.5) }
        await eventually("the snapshot after the reset applied") { client.resumeRevision == 6 }
        let afterDisconnect = changes.values.dropFirst()
        // The snapshot after the reset carries all 8 keys; only the two that changed are news.
        XCTAssertEqual(afterDisconnect.map(\.key).sorted(), ["age", "speed"])
        XCTAssertEqual(afterDisconnect.first { $0.key == "age" }?.value, .integer(10))
        assertNoRepeats(changes.values)
    }
}
