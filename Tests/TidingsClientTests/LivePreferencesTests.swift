import Foundation
import Observing
import OpenCombine
import TidingsClient
import XCTest
import TestFixtures

/// The library's container and wrappers over a live server: reads, per-key publishers,
/// writes through the binding, conflicts and refusals.
@MainActor
final class LivePreferencesTests: XCTestCase {
    private var directories: [URL] = []

    override func tearDown() async throws {
        directories.forEach(TidingsProcess.removeDirectory)
    }

    private func startServer(_ arguments: [String] = []) throws -> TidingsProcess {
        let directory = TidingsProcess.temporaryDirectory()
        directories.append(directory)
        return try TidingsProcess(arguments: arguments, dataDirectory: directory)
    }

    func testAPlainPutReachesThatKeysPublisherOnly() async throws {
        let server = try startServer()
        let client = await connectedClient(server)
        let screen = Screen(AppSettings(store: client.preferences))
        let ages = Recorder(screen.$age.publisher)
        let names = Recorder(screen.$name.publisher)
        let speeds = Recorder(screen.$speed.publisher)
        XCTAssertEqual(ages.values, [5])
        XCTAssertEqual(names.values, ["fat"])

        let answer = try server.request("PUT", "/preferences/age", json: ["value": 42])
        XCTAssertEqual(answer.status, 200, answer.text)
        await ages.waitForLatest("age 42") { $0 == 42 }
        XCTAssertEqual(screen.age, 42)
        XCTAssertEqual(screen.preferenceSource.age, 42)

        // A later change on the same stream: once it is here, anything for `name` would be too.
        _ = try server.request("PUT", "/preferences/speed", json: ["value": 2.5])
        await speeds.waitForLatest("speed 2.5") { $0 == 2.5 }
        XCTAssertEqual(names.values, ["fat"], "a change of age or speed reached the name publisher")
        XCTAssertEqual(ages.values, [5, 42])
        XCTAssertEqual(speeds.values, [0, 2.5])
    }

    func testAWriteThroughTheBindingShowsOnAnotherClientsStream() async throws {
        let server = try startServer()
        let writer = await connectedClient(server)
        let reader = await connectedClient(server)
        let writerScreen = Screen(AppSettings(store: writer.preferences))
        let readerScreen = Screen(AppSettings(store: reader.preferences))
        let seen = Recorder(reader.preferences.changes.filter { $0.key == "name" })
        let readerNames = Recorder(readerScreen.$name.publisher)

        let binding = writerScreen.$name
        binding.wrappedValue = "alice"
        XCTAssertEqual(writerScreen.name, "alice", "the writer sees its own write at once")

        await seen.waitForLatest("the reader's stream announcing the write") { $0.value == .string("alice") }
        XCTAssertGreaterThan(seen.values.last!.revision, 0)
        await readerNames.waitForLatest("the reader's name publisher") { $0 == "alice" }
        XCTAssertEqual(readerScreen.name, "alice")
        let onServer = try server.get("/preferences/name")
        XCTAssertEqual(onServer.value?["value"], "alice", onServer.text)
    }

    func testSeveralKeysAtOnceAndAResetGoThroughTheContainer() async throws {
        let server = try startServer()
        let writer = await connectedClient(server)
        let reader = await connectedClient(server)
        let settings = AppSettings(store: writer.preferences)
        let seen = Recorder(reader.preferences.changes)

        // Several keys in one container update: one PATCH, atomic on the server.
        try settings.preferences.propose(PreferencePatch(values: ["age": .integer(8), "name": .string("multi")]))
        await seen.wait("both keys on the other client") { values in
            values.contains { $0.key == "age" && $0.value == .integer(8) } && values.contains { $0.key == "name" && $0.value == .string("multi") }
        }
        // A reset is a DELETE (with If-Match), sent at once: it waits for the PATCH and builds
        // on the revision the PATCH gave `age`. The other client sees the default come back.
        try settings.preferences.propose(PreferencePatch(values: ["age": nil]))
        await seen.waitForLatest("age back to its default") { $0.key == "age" && $0.value == .integer(5) }
        XCTAssertEqual(settings.age, 5)
        XCTAssertTrue(Recorder(writer.preferences.writeFailures).values.isEmpty)
    }

    func testQuickSuccessiveWritesOfOneKeyNeverConflictWithEachOther() async throws {
        let server = try startServer()
        let writer = await connectedClient(server)
        let reader = await connectedClient(server)
        let screen = Screen(AppSettings(store: writer.preferences))
        let failures = Recorder(writer.preferences.writeFailures)
        let readerScreen = Screen(AppSettings(store: reader.preferences))
        let readerAges = Recorder(readerScreen.$age.publisher)

        // A slider: eleven writes before the first answer is back, each with If-Match.
        for value in 10...20 { screen.$age.wrappedValue = value }
        await readerAges.waitForLatest("the last value on the other client") { $0 == 20 }
        await eventually("every write answered") { !writer.preferences.hasWritesInFlight }
        XCTAssertEqual(failures.values, [])
        XCTAssertEqual(writer.preferences.revision(forKey: "age"), 11)
        XCTAssertEqual(screen.age, 20)
        XCTAssertEqual(readerScreen.age, 20)
    }

    func testTwoClientsWritingFromTheSameRevisionOneWinsTheOtherGetsTheConflictThenTheWinnersValue() async throws {
        let server = try startServer()
        let first = await connectedClient(server)
        let second = await connectedClient(server)
        XCTAssertEqual(first.preferences.revision(forKey: "name"), 0)
        XCTAssertEqual(second.preferences.revision(forKey: "name"), 0)
        let screens = [Screen(AppSettings(store: first.preferences)), Screen(AppSettings(store: second.preferences))]
        let names = screens.map { Recorder($0.$name.publisher) }
        let failures = [Recorder(first.preferences.writeFailures), Recorder(second.preferences.writeFailures)]

        // Both writes leave from revision 0 before either answer is back.
        screens[0].$name.wrappedValue = "alice"
        screens[1].$name.wrappedValue = "bob"
        await eventually("both writes answered") {
            !first.preferences.hasWritesInFlight && !second.preferences.hasWritesInFlight
        }
        XCTAssertEqual(failures[0].values.count + failures[1].values.count, 1, "exactly one write loses")
        guard let loser = failures.firstIndex(where: { !$0.values.isEmpty }) else { return }
        let winner = 1 - loser
        let winnerValue = ["alice", "bob"][winner]
        let failure = failures[loser].values[0]
        XCTAssertEqual(failure.key, "name")
        XCTAssertEqual(failure.attempted, .string(["alice", "bob"][loser]))
        guard case let .conflict(problem) = failure.error else {
            return XCTFail("expected a conflict, got \(failure.error)")
        }
        XCTAssertEqual(problem.status, 412)

        // The loser's own value first, then the winner's; the winner never sees the loser's.
        await names[loser].waitForLatest("the winner's value at the loser") { $0 == winnerValue }
        XCTAssertEqual(Array(names[loser].values.prefix(2)), ["fat", ["alice", "bob"][loser]])
        XCTAssertEqual(screens[loser].name, winnerValue)
        XCTAssertEqual(screens[winner].name, winnerValue)
        XCTAssertFalse(names[winner].values.contains(["alice", "bob"][loser]))
        let onServer = try server.get("/preferences/name")
        XCTAssertEqual(onServer.value?["value"], .string(winnerValue), onServer.text)
    }

    func testARefusedValueIsATypedErrorAndTheValueStaysTheServers() async throws {
        // The server allows ages up to 10; the program's declaration has no bound.
        let schema = TidingsProcess.temporaryDirectory().appendingPathExtension("json")
        directories.append(schema)
        try Data(#"{"name": {"type": "string", "default": "fat"}, "age": {"type": "integer", "default": 5, "maximum": 10}, "speed": {"type": "number", "default": 0}}"#.utf8)
            .write(to: schema)
        let server = try startServer(["--preferences", schema.path])
        let client = await connectedClient(server)
        let screen = Screen(AppSettings(store: client.preferences))
        let ages = Recorder(screen.$age.publisher)
        let failures = Recorder(client.preferences.writeFailures)

        screen.$age.wrappedValue = 50
        await failures.wait("the refusal") { !$0.isEmpty }
        guard case let .refused(problem) = failures.values[0].error else {
            return XCTFail("expected a refusal, got \(failures.values[0].error)")
        }
        XCTAssertEqual(problem.status, 422)
        XCTAssertEqual(screen.age, 5, "the value is the server's again")
        XCTAssertEqual(ages.values, [5, 50, 5])

        // The awaited API throws the same typed errors.
        do {
            try await client.preferences.set(.integer(11), forKey: "age")
            XCTFail("11 is above the server's maximum")
        } catch {
            guard case .refused = error else { return XCTFail("expected a refusal, got \(error)") }
        }
        do {
            try await client.preferences.set(.integer(7), forKey: "age", ifRevision: 99)
            XCTFail("revision 99 is not current")
        } catch {
            guard case .conflict = error else { return XCTFail("expected a conflict, got \(error)") }
        }
        do {
            try await client.preferences.set(.integer(7), forKey: "nope")
            XCTFail("there is no key nope")
        } catch {
            guard case .notFound = error else { return XCTFail("expected not found, got \(error)") }
        }
        let record = try await client.preferences.set(.integer(7), forKey: "age", ifRevision: 0)
        XCTAssertEqual(record.value, .integer(7))
        XCTAssertEqual(screen.age, 7, "an awaited write is in the container when it returns")
    }

    func testTokensOnEveryRequestOrStreamTickets() async throws {
        let server = try startServer(["--api-token", "secret-token", "--read-token", "reader-token"])
        for credentials in [TidingsCredentials.bearer("secret-token"), .bearerWithStreamTickets("secret-token")] {
            let client = await connectedClient(server, credentials: credentials)
            let screen = Screen(AppSettings(store: client.preferences))
            let seen = Recorder(client.preferences.changes.filter { $0.key == "age" })
            let target = credentials == .bearer("secret-token") ? 20 : 21
            screen.age = target
            await seen.waitForLatest("the write announced back on the stream") { $0.value == .integer(target) }
            XCTAssertTrue(Recorder(client.preferences.writeFailures).values.isEmpty)
            client.disconnect()
        }
        let intruder = TidingsClient(url: server.url, credentials: .bearer("wrong"))
        let states = Recorder(intruder.connectionState)
        intruder.connect()
        await states.waitForLatest("the stream refused for good") {
            if case .failed(.unauthorized) = $0 { return true }
            return false
        }
    }
}
