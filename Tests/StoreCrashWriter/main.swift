// The writer a crash test kills: commits to an SQLite store in DIRECTORY from 16 concurrent
// clients and prints one `ACK client n revisions` line per acknowledged commit, until it is
// killed (CrashRecoveryTests sends SIGKILL mid-load) or a bound of commits is reached.
//
//   store-crash-writer DIRECTORY
import Foundation
import TidingsStore

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: store-crash-writer DIRECTORY\n".utf8))
    exit(2)
}
let store = try SQLiteStore(directory: URL(fileURLWithPath: CommandLine.arguments[1]))
try await withThrowingTaskGroup(of: Void.self) { group in
    for client in 0..<16 {
        group.addTask {
            // Bounded, so a parent that dies never leaves this running for long.
            for n in 0..<1_000_000 {
                var operations: [WriteOperation] = [.setPreference(key: "c\(client)-\(n)", json: "\(n)", defaultJSON: "null")]
                if n % 5 == 0 { operations.append(.addThing("T\(client)-\(n)")) }
                let revisions = try await store.commit(StoreWrite(operations)).map(\.revision)
                // One write(2) per line: atomic on a pipe, and only after the ack.
                let line = "ACK \(client) \(n) \(revisions.map(String.init).joined(separator: ","))\n"
                FileHandle.standardOutput.write(Data(line.utf8))
            }
        }
    }
    try await group.waitForAll()
}
