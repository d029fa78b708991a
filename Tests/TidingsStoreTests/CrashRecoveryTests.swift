import Foundation
import XCTest
@testable import TidingsStore

/// SIGKILL during a concurrent write load loses no acknowledged write.
///
/// The parent test launches this same test binary again, running only
/// `testCrashChildWriter` with `TIDINGS_STORE_CRASH_CHILD_DIR` set. The child commits from 16
/// concurrent clients and prints one `ACK` line per acknowledged commit; the parent kills it
/// with SIGKILL mid-load, reopens the store and checks every acknowledged write.
final class CrashRecoveryTests: XCTestCase {
    static let childDirectoryVariable = "TIDINGS_STORE_CRASH_CHILD_DIR"

    /// The child half. Skipped in a normal run.
    func testCrashChildWriter() async throws {
        guard let path = ProcessInfo.processInfo.environment[Self.childDirectoryVariable] else {
            throw XCTSkip("child process of testSIGKILLDuringConcurrentWritesLosesNoAcknowledgedWrite")
        }
        let store = try SQLiteStore(directory: URL(fileURLWithPath: path))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<16 {
                group.addTask {
                    // Bounded so a parent that dies never leaves this running for long.
                    for n in 0..<1_000_000 {
                        var operations: [StoreOperation] = [.setPreference(key: "c\(client)-\(n)", json: "\(n)")]
                        if n % 5 == 0 { operations.append(.addThing("T\(client)-\(n)")) }
                        let revisions = try await store.commit(operations)
                        // One write(2) per line: atomic on a pipe, and only after the ack.
                        let line = "ACK \(client) \(n) \(revisions.map(String.init).joined(separator: ","))\n"
                        FileHandle.standardOutput.write(Data(line.utf8))
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    struct Ack { var client: Int; var n: Int; var revisions: [UInt64] }

    func testSIGKILLDuringConcurrentWritesLosesNoAcknowledgedWrite() throws {
        #if os(Linux)
        let dir = makeTemporaryDirectory(self)
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments = ["TidingsStoreTests.CrashRecoveryTests/testCrashChildWriter"]
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childDirectoryVariable] = dir.path
        child.environment = environment
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
        #else
        throw XCTSkip("spawns /proc/self/exe; Linux only")
        #endif
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
