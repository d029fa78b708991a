import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// A server full of streams (`--max-streams`) on the real binary: streams over the budget get
/// 200 + `retry:` + end while reads, writes, `/healthz`, `/readyz` and `/metrics` are answered;
/// `/metrics` shows the budget, its use, the streams shed and the standard process metrics, and
/// passes `promtool check metrics`.
final class CapacityMetricsTests: XCTestCase {
    private func samples(_ text: String) -> [String: Double] {
        var result: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            result[String(line[..<space])] = value
        }
        return result
    }

    func testFullServerShedsStreamsAnswersTheRestAndSaysSoInMetrics() throws {
        let server = try TidingsProcess(arguments: ["--max-streams", "4", "--stream-padding", "64"])
        defer { server.stop() }
        var streams: [EventStreamReader] = []
        for _ in 0..<4 { streams.append(try server.openEventStream("/preferences/events?keys=age")) }
        for _ in 0..<3 {
            let refused = try server.get("/things/events", headers: ["Accept": "text/event-stream"])
            XCTAssertEqual(refused.status, 200)
            XCTAssertEqual(refused.header("Content-Type"), "text/event-stream")
            var parser = ServerSentEventParser()
            let retry = try XCTUnwrap(parser.feed(refused.body).compactMap { if case let .retry(ms) = $0 { ms } else { nil } }.first,
                                      refused.text)
            XCTAssertTrue((1_500...4_500).contains(retry), "\(retry)")
        }
        XCTAssertEqual(try server.request("PUT", "/preferences/age", json: ["value": 41]).status, 200)
        XCTAssertEqual(try server.get("/preferences/age").status, 200)
        XCTAssertEqual(try server.get("/healthz").status, 200)
        XCTAssertEqual(try server.get("/readyz").status, 200)
        for stream in streams {
            // The snapshot (age at its default), then the write.
            var values: [Int] = []
            while values.last != 41 {
                let event = try stream.nextEvent(timeout: 5)
                if event.name == "preference", let value = event.json?["value"] as? Int { values.append(value) }
            }
            XCTAssertEqual(values, [5, 41], "open streams still get the write")
        }

        let metrics = try server.get("/metrics")
        XCTAssertEqual(metrics.status, 200)
        let values = samples(metrics.text)
        XCTAssertEqual(values["tidings_streams_max"], 4)
        XCTAssertEqual(values["tidings_streams"], 4)
        XCTAssertEqual(values["tidings_streams_shed_total"], 3)
        XCTAssertGreaterThan(values["process_resident_memory_bytes"] ?? 0, 1_048_576)
        XCTAssertGreaterThan(values["process_open_fds"] ?? 0, 4, "the four streams' sockets at least")
        XCTAssertGreaterThan(values["process_max_fds"] ?? 0, 256)
        XCTAssertGreaterThan(values["process_cpu_seconds_total"] ?? 0, 0)
        let start = try XCTUnwrap(values["process_start_time_seconds"])
        XCTAssertLessThan(abs(start - Date().timeIntervalSince1970), 600, "start time in epoch seconds")

        // promtool (Debian `prometheus`, installed by `make test-deps`) judges the exposition.
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-metrics-\(UUID().uuidString).txt")
        try Data(metrics.body).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let promtool = Process()
        promtool.executableURL = URL(fileURLWithPath: "/usr/bin/promtool")
        promtool.arguments = ["check", "metrics"]
        promtool.standardInput = try FileHandle(forReadingFrom: file)
        let output = Pipe()
        promtool.standardOutput = output
        promtool.standardError = output
        try promtool.run()
        promtool.waitUntilExit()
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(promtool.terminationStatus, 0, "promtool check metrics: \(report)")
        withExtendedLifetime(streams) {}
    }

    func testBadCapacityFlagsStopStartUp() throws {
        for arguments in [["--trusted-proxy", "10.0.0.0/40"], ["--max-streams", "0"], ["--stream-padding", "9000"]] {
            XCTAssertThrowsError(try TidingsProcess(arguments: arguments, startupTimeout: 5), "\(arguments)")
        }
    }
}
