import Foundation
import TestFixtures
import TidingsTesting
import XCTest

/// The replay history and the change log are bounded by bytes as well as by count
/// (`--replay-bytes`, openapi.yaml "Sizes"): large values do not grow memory or the data directory
/// without bound, and resuming from an evicted position is a `reset`.
final class ReplayBoundTests: XCTestCase {
    private func residentKiB(_ pid: Int32) -> Int {
        (ProcessStats.residentBytes(pid) ?? 0) >> 10
    }

    private func directoryBytes(_ url: URL) -> Int {
        let files = (try? FileManager.default.contentsOfDirectory(at: url, includingPropertiesForKeys: [.fileSizeKey])) ?? []
        return files.reduce(0) { $0 + ((try? $1.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
    }

    func test_large_values_are_bounded_by_replay_bytes_in_memory_and_on_disk() throws {
        // The change table is the history: bounded by --history-bytes (default 256 MiB), here 4 MB.
        let server = try TidingsProcess(arguments: ["--replay-bytes", "2000000", "--history-bytes", "4000000"])
        defer { server.stop() }
        let connection = try server.connect()
        func put(_ n: Int) throws {
            let value = String(repeating: Character(UnicodeScalar(UInt8(65 + n % 26))), count: 60_000) + "\(n)"
            XCTAssertEqual(try connection.request("PUT", "/preferences/name", json: ["value": value]).status, 200)
        }
        for n in 0..<50 { try put(n) }   // warm-up: allocator and caches settle
        let warm = residentKiB(server.pid)
        for n in 50..<450 { try put(n) }  // 24 MB of values, 12 times the bound
        let after = residentKiB(server.pid)
        // Against what was written: kept, the values alone would be all of it (each also held as
        // an encoded frame, twice); bounded, growth stays under it, on any allocator.
        let written = 400 * 60_000
        print("24 MB of writes with a 2 MB replay bound: RSS \(warm) -> \(after) KiB")
        XCTAssertLessThan((after - warm) << 10, written, "memory grew \(after - warm) KiB for 24 MB of writes")
        // On disk: the change log keeps what --history-bytes allows (each record holds the value
        // and the one it replaced), plus checkpoints and SQLite's WAL.
        XCTAssertLessThan(directoryBytes(server.dataDirectory), 24 << 20, "the data directory grew without bound")

        // Resuming from a position long evicted is a reset and a snapshot; a recent one replays.
        let old = try server.openEventStream("/preferences/name/events", headers: ["Last-Event-ID": "10"])
        XCTAssertEqual(try old.nextEvent().name, "reset")
        let current = try server.currentRevision()
        let recent = try server.openEventStream("/preferences/name/events", headers: ["Last-Event-ID": String(current - 3)])
        XCTAssertEqual(try recent.nextEvents(3).map(\.id), [current - 2, current - 1, current].map(String.init))
    }
}
