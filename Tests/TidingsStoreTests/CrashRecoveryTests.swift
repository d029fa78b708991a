import Foundation
import XCTest
@testable import TidingsStore

/// SIGKILL during a concurrent write load loses no acknowledged write.
///
/// The test starts `store-crash-writer` (Tests/StoreCrashWriter, built beside this test binary),
/// which commits from 16 concurrent clients and prints one `ACK` line per acknowledged commit; it
/// kills the writer with SIGKILL mid-load, reopens the store and checks every acknowledged write.
final class CrashRecoveryTests: XCTestCase {
    struct Ack { var client: Int; var n: Int; var revisions: [UInt64] }

    func testSIGKILLDuringConcurrentWritesLosesNoAcknowledgedWrite() throws {
        let dir = makeTemporaryDirectory(self)
        let child = Process()
        child.executableURL = Self.binDirectory.appendingPathComponent("store-crash-writer")
        child.arguments = [dir.path]
        let output = Pipe()
        child.standardOutput = output
        child.standardError = FileHandle.nullDevice
        try child.run()

        // Let a few thousand writes be acknowledged, then kill at a random moment.
        let killAfter = Int.random(in: 2_000...4_000)
        var text = ""
        var acks = 0
        let reader = output.fileHandleForReading
        while acks < killAfter {
            let data = reader.availableData
            if data.isEmpty { break }   // the child ended early: reported below
            let chunk = String(decoding: data, as: UTF8.self)
            acks += chunk.components(separatedBy: "ACK ").count - 1
            text += chunk
        }
        kill(child.processIdentifier, SIGKILL)
        // Acks printed before the kill are acknowledged writes too: read to the end.
        text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        child.waitUntilExit()
        XCTAssertEqual(child.terminationReason, .uncaughtSignal, "the child must die by SIGKILL, not finish")

        let parsed: [Ack] = text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 4, fields[0] == "ACK", let client = Int(fields[1]), let n = Int(fields[2]) else { return nil }
            return Ack(client: client, n: n, revisions: fields[3].split(separator: ",").compactMap { UInt64($0) })
        }
        XCTAssertGreaterThanOrEqual(parsed.count, killAfter)

        let store = try SQLiteStore(directory: dir)
        XCTAssertEqual(try store.pragma("integrity_check"), "ok")
        let snapshot = try store.syncSnapshot()
        let things = Set(snapshot.things)
        var lost = 0
        for ack in parsed {
            let key = "c\(ack.client)-\(ack.n)"
            if snapshot.preferences[key] != StoredPreference(json: "\(ack.n)", revision: ack.revisions[0]) { lost += 1 }
            if ack.n % 5 == 0, !things.contains("T\(ack.client)-\(ack.n)") { lost += 1 }
        }
        XCTAssertEqual(lost, 0, "acknowledged writes missing after SIGKILL")
        let highest = parsed.flatMap(\.revisions).max() ?? 0
        XCTAssertGreaterThanOrEqual(snapshot.revision, highest)
        print("SIGKILL after \(parsed.count) acknowledged commits (highest revision \(highest)); reopened at revision \(snapshot.revision), nothing lost")

        // The counter keeps going forward from where the killed process left it.
        let next = try awaitCommit(store, [.setPreference(key: "after", json: "true")])
        XCTAssertEqual(next, [snapshot.revision + 1])
    }

    /// The directory the test binaries were built into (where `store-crash-writer` is).
    private static var binDirectory: URL {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// Runs an async commit from this synchronous test.
    private func awaitCommit(_ store: SQLiteStore, _ operations: [StoreOperation]) throws -> [UInt64] {
        let done = expectation(description: "commit")
        nonisolated(unsafe) var result: Result<[UInt64], any Error>?
        Task {
            do { result = .success(try await store.commit(operations)) } catch { result = .failure(error) }
            done.fulfill()
        }
        wait(for: [done], timeout: 10)
        return try XCTUnwrap(result).get()
    }
}
