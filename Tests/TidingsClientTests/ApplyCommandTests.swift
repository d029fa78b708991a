import Foundation
import TestFixtures
import XCTest

/// `tidings-client export` and `tidings-client apply FILE` against the real server: a YAML
/// export kept in a file, edited, dry-run, applied, pruned.
final class ApplyCommandTests: XCTestCase {
    /// The `key: value` members indented under `section:` in a block-style YAML document.
    static func yamlMembers(_ yaml: String, under section: String) -> [String: String] {
        var members: [String: String] = [:]
        var inside = false
        for line in yaml.split(separator: "\n") {
            if !line.hasPrefix(" ") { inside = line == "\(section):"; continue }
            guard inside, let colon = line.firstIndex(of: ":") else { continue }
            members[line[..<colon].trimmingCharacters(in: .whitespaces)] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return members
    }

    /// Each line of `text` read as a JSON object (lines that are not one are left out).
    static func jsonLines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    private var directories: [URL] = []

    override func tearDown() { directories.forEach(TidingsProcess.removeDirectory) }

    private func startServer() throws -> TidingsProcess {
        let directory = TidingsProcess.temporaryDirectory()
        directories.append(directory)
        return try TidingsProcess(arguments: [], dataDirectory: directory)
    }

    func testExportEditDryRunApplyAndPruneThroughTheCommand() throws {
        let server = try startServer()
        let url = server.url.absoluteString
        XCTAssertEqual(try run(["--url", url, "set", "name", "\"bob\""]).0, 0)
        let exported = try run(["--url", url, "export", "--yaml"])
        XCTAssertEqual(exported.0, 0, exported.2)
        // A YAML document of one level of `key: value` lines under `preferences:`.
        XCTAssertEqual(Self.yamlMembers(exported.1, under: "preferences")["name"], "bob", exported.1)

        // Kept in a file, edited as a person would, applied.
        let file = directories[0].appendingPathComponent("tidings.yaml")
        let edited = exported.1.replacingOccurrences(of: "age: 5", with: "age: 12")
            .replacingOccurrences(of: "things: []", with: "things:\n- yolo")
        try Data(edited.utf8).write(to: file)
        let dry = try run(["--url", url, "apply", file.path, "--dry-run"])
        XCTAssertEqual(dry.0, 0, dry.2)
        let plan = Self.jsonLines(dry.1).first?["changes"] as? [[String: Any]]
        XCTAssertEqual(plan?.map { $0["key"] as? String }, ["age"], dry.1)
        XCTAssertEqual(plan?.first?["after"] as? Int, 12, dry.1)
        XCTAssertEqual(try run(["--url", url, "get", "age"]).1, "5\n", "a dry run writes nothing")
        let applied = try run(["--url", url, "apply", file.path, "--reason", "from git"])
        XCTAssertEqual(applied.0, 0, applied.2)
        XCTAssertEqual(try run(["--url", url, "get", "age"]).1, "12\n")
        XCTAssertEqual(try HTTPConnection(port: server.port).request("GET", "/things").value?["things"]?.strings, ["YOLO"])

        // A JSON document naming one key, pruned: every other key back to its default.
        let json = directories[0].appendingPathComponent("age.json")
        try Data(#"{"preferences": {"age": 13}}"#.utf8).write(to: json)
        XCTAssertEqual(try run(["--url", url, "apply", json.path, "--prune"]).0, 0)
        XCTAssertEqual(try run(["--url", url, "get", "name"]).1, "\"fat\"\n")
        XCTAssertEqual(try run(["--url", url, "get", "age"]).1, "13\n")

        // A bad value: status 1, the server's 422 on standard error, nothing written.
        try Data(#"{"preferences": {"age": "old"}}"#.utf8).write(to: json)
        let refused = try run(["--url", url, "apply", json.path])
        XCTAssertEqual(refused.0, 1)
        XCTAssertEqual(ClientRefusal(refused.2)?.status, 422, refused.2)
        XCTAssertEqual(try run(["--url", url, "get", "age"]).1, "13\n")
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
