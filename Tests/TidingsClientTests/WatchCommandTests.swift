import Foundation
import TestFixtures
import XCTest

/// The built `tidings-client` executable against the real server, output read line by line.
final class WatchCommandTests: XCTestCase {
    private var directories: [URL] = []

    override func tearDown() {
        directories.forEach(TidingsProcess.removeDirectory)
    }

    private func newDirectory() -> URL {
        let directory = TidingsProcess.temporaryDirectory()
        directories.append(directory)
        return directory
    }

    /// Runs `tidings-client <arguments>` to its end: (status, stdout, stderr).
    private func run(_ arguments: [String], environment: [String: String] = [:]) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = TidingsProcess.binDirectory.appendingPathComponent("tidings-client")
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    private func put(_ server: TidingsProcess, _ key: String, _ json: String) throws {
        let (status, _, errors) = try run(["--url", server.url.absoluteString, "set", key, json])
        XCTAssertEqual(status, 0, errors)
    }

    func testGetAndSetPrintJSONAndRefusalsExitWithAMessage() throws {
        let server = try TidingsProcess(arguments: ["--api-token", "tok"], dataDirectory: newDirectory())
        let url = server.url.absoluteString
        XCTAssertEqual(try run(["--url", url, "get", "age"]).1, "5\n")
        let (status, output, _) = try run(["--url", url, "set", "name", "\"bob\""], environment: ["TIDINGS_TOKEN": "tok"])
        XCTAssertEqual(status, 0)
        XCTAssertEqual(output, #"{"key":"name","revision":1,"value":"bob"}"# + "\n")
        let all = try run(["get", "--url", url]).1
        XCTAssertEqual(all, #"{"age":5,"name":"bob","numberOfItems":0,"onboardingCompleted":false,"promptedForProVersion":false,"readyForAction":false,"should_show_hello_world":false,"speed":0}"# + "\n")

        let unauthorized = try run(["--url", url, "set", "age", "6"])
        XCTAssertEqual(unauthorized.0, 1)
        XCTAssertEqual(ClientRefusal(unauthorized.2)?.status, 401, unauthorized.2)
        let refused = try run(["--url", url, "--token", "tok", "set", "age", "1.5"])
        XCTAssertEqual(refused.0, 1)
        XCTAssertEqual(ClientRefusal(refused.2), ClientRefusal("tidings-client: 422: Preference 'age': expected a value of type integer. (age: expected a value of type integer)"), refused.2)
        let conflict = try run(["--url", url, "--token", "tok", "set", "name", "\"x\"", "--if-revision", "0"])
        XCTAssertEqual(conflict.0, 1)
        XCTAssertEqual(ClientRefusal(conflict.2)?.status, 412, conflict.2)
        // A stream the server refuses (an unknown key is a 422) ends `watch` with its message.
        let unknownKey = try run(["--url", url, "--token", "tok", "watch", "--keys", "age,nope"])
        XCTAssertEqual(unknownKey.0, 1)
        XCTAssertEqual(ClientRefusal(unknownKey.2), ClientRefusal("tidings-client: 422: There is no preference 'nope'. (nope: unknown preference)"), unknownKey.2)
        let notJSON = try run(["--url", url, "set", "age", "six"])
        XCTAssertNotEqual(notJSON.0, 0)
        XCTAssertEqual(ClientRefusal.usageError(notJSON.2), #"Error: VALUE must be a JSON boolean, number or string (quote strings: '"text"')"#, notJSON.2)
        // Without --url: $TIDINGS_URL (else the server's default address, 127.0.0.1:8080).
        XCTAssertEqual(try run(["get", "age"], environment: ["TIDINGS_URL": url]).1, "5\n")
        let badVariable = try run(["get", "age"], environment: ["TIDINGS_URL": "ftp://x"])
        XCTAssertEqual(badVariable.0, 64)
        XCTAssertEqual(ClientRefusal.usageError(badVariable.2),
                       "Error: --url (or $TIDINGS_URL) must be an http or https URL, like http://127.0.0.1:8080, not 'ftp://x'", badVariable.2)
    }

    func testEnvironmentComesFromTheOptionElseTheVariable() throws {
        let server = try TidingsProcess(dataDirectory: newDirectory())
        let url = server.url.absoluteString
        XCTAssertEqual(try server.request("PUT", "/environments/staging", json: [String: String]()).status, 201)
        XCTAssertEqual(try run(["--url", url, "--env", "staging", "set", "name", "\"stagey\""]).0, 0)
        XCTAssertEqual(try run(["--url", url, "get", "name"]).1, "\"fat\"\n")
        XCTAssertEqual(try run(["--url", url, "--env", "staging", "get", "name"]).1, "\"stagey\"\n")
        XCTAssertEqual(try run(["--url", url, "get", "name"], environment: ["TIDINGS_ENV": "staging"]).1, "\"stagey\"\n")
        // The option wins over the variable; an empty variable is none.
        XCTAssertEqual(try run(["--url", url, "--env", "default", "get", "name"], environment: ["TIDINGS_ENV": "staging"]).1, "\"fat\"\n")
        XCTAssertEqual(try run(["--url", url, "get", "name"], environment: ["TIDINGS_ENV": ""]).1, "\"fat\"\n")
        let bad = try run(["--url", url, "get", "name"], environment: ["TIDINGS_ENV": "Staging"])
        XCTAssertEqual(bad.0, 64)
        XCTAssertEqual(ClientRefusal.usageError(bad.2), "Error: --env (or $TIDINGS_ENV) must match ^[a-z][a-z0-9-]{0,31}$, not 'Staging'", bad.2)
    }

    func testWatchPrintsTheCurrentValuesThenEachChangeAcrossARestart() throws {
        let directory = newDirectory()
        var server = try TidingsProcess(dataDirectory: directory)
        let port = server.port
        try put(server, "age", "6")

        let watch = Process()
        watch.executableURL = TidingsProcess.binDirectory.appendingPathComponent("tidings-client")
        watch.arguments = ["--url", server.url.absoluteString, "watch", "--keys", "age,name"]
        let out = Pipe()
        watch.standardOutput = out
        watch.standardError = FileHandle.nullDevice
        try watch.run()
        defer {
            watch.terminate()
            watch.waitUntilExit()
        }
        let lines = LineReader(out.fileHandleForReading)
        // Generous: after a restart the client waits out the server's `retry: 3000` with back-off.
        func next() -> String? { lines.line(within: 40) }

        // The current values first, in the server's declaration order.
        XCTAssertEqual(next(), #"{"key":"name","revision":0,"value":"fat"}"#)
        XCTAssertEqual(next(), #"{"key":"age","revision":1,"value":6}"#)
        try put(server, "speed", "3.5")          // not watched
        try put(server, "age", "7")
        XCTAssertEqual(next(), #"{"key":"age","revision":3,"value":7}"#)

        XCTAssertEqual(server.stop(), 0)
        server = try TidingsProcess(dataDirectory: directory, port: port)
        try put(server, "name", "\"restarted\"")
        try put(server, "age", "8")
        XCTAssertEqual(next(), #"{"key":"name","revision":4,"value":"restarted"}"#)
        XCTAssertEqual(next(), #"{"key":"age","revision":5,"value":8}"#)
        try put(server, "age", "9")
        XCTAssertEqual(next(), #"{"key":"age","revision":6,"value":9}"#, "nothing repeated after the restart")
    }
}
