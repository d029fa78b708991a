import Foundation
import XCTest
import TestFixtures
import TidingsTesting

/// The real binary: listening line, operational endpoints, flags/env, graceful signals.
final class OperationsTests: XCTestCase {
    func testHealthzAndReadyz() throws {
        let server = try TidingsProcess()
        defer { server.stop() }
        let health = try server.get("/healthz")
        XCTAssertEqual(health.status, 200)
        XCTAssertEqual(health.header("Content-Type"), "application/json")
        XCTAssertEqual(health.json?["status"] as? String, "ok")
        XCTAssertEqual(health.header("Tidings-Revision"), "0")
        let ready = try server.get("/readyz")
        XCTAssertEqual(ready.status, 200)
        let missing = try server.get("/no/such/thing")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.header("Content-Type"), "application/problem+json")
        XCTAssertNotNil(missing.header("Tidings-Revision"))
        // The data directory was created.
        var isDirectory: ObjCBool = false
        XCTAssertTrue(FileManager.default.fileExists(atPath: server.dataDirectory.path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    func testFlagWinsOverEnvironmentAndBadEnvironmentIsRefused() throws {
        // TIDINGS_PORT would pick 1 (privileged/in use); the harness's --port 0 must win.
        let server = try TidingsProcess(environment: ["TIDINGS_PORT": "1", "TIDINGS_LOG_LEVEL": "debug"])
        XCTAssertNotEqual(server.port, 1)
        XCTAssertEqual(try server.get("/healthz").status, 200)
        XCTAssertEqual(server.stop(), 0)
        XCTAssertTrue(eventually { LogLine.parse(server.log).contains { $0.level == "debug" } },
                      "TIDINGS_LOG_LEVEL=debug was not applied:\n\(server.log)")

        XCTAssertThrowsError(try TidingsProcess(environment: ["TIDINGS_TEXT_CASE": "sideways"])) { error in
            XCTAssertEqual((error as? TidingsProcess.StartError)?.log.split(separator: "\n").first,
                           "Error: --text-case must be upper or none, not 'sideways'.", "\(error)")
        }
        XCTAssertThrowsError(try TidingsProcess(arguments: ["--heartbeat", "-3"]))
    }

    func testSigtermAnswersInFlightClosesConnectionsAndExitsZero() throws {
        let server = try TidingsProcess()
        let idle = try server.connect()
        XCTAssertEqual(try idle.request("GET", "/healthz").status, 200)
        let started = Date()
        XCTAssertEqual(server.stop(signal: SIGTERM), 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        XCTAssertTrue(idle.waitForClose(timeout: 2), "idle keep-alive connection left open")
        XCTAssertThrowsError(try server.connect(), "still accepting after exit")
        XCTAssertTrue(eventually { LogLine.parse(server.log).contains { $0.message == "shutdown complete" } }, server.log)
    }

    func testSigintAlsoExitsZero() throws {
        let server = try TidingsProcess()
        XCTAssertEqual(try server.get("/healthz").status, 200)
        XCTAssertEqual(server.stop(signal: SIGINT), 0)
    }

    func testSigtermEndsOpenEventStreams() throws {
        let server = try TidingsProcess(arguments: ["--heartbeat", "1"])
        defer { server.stop() }
        let stream = try server.openEventStream("/events")
        XCTAssertEqual(stream.reply.status, 200)
        XCTAssertEqual(server.stop(signal: SIGTERM), 0)
        _ = try stream.readToEnd(timeout: 5)
        XCTAssertTrue(stream.isEnded)
    }
}
