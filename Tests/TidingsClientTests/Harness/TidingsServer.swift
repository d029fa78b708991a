import Foundation
import XCTest

/// The real `tidings` executable on loopback with a data directory the test chooses, so that
/// a test can stop it and start another on the same port and directory (a restart) or on a
/// fresh one (a server that lost its store). Same start-up contract as the end-to-end
/// harness: wait for the listening line on stdout.
final class TidingsServer {
    let process = Process()
    let port: Int
    let url: URL
    let dataDirectory: URL
    private let stderrPipe = Pipe()
    private var exitStatus: Int32?

    /// A fresh temporary directory for `--data-dir` (the caller removes it with ``removeDirectory(_:)``).
    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tidings-client-\(UUID().uuidString)")
    }

    static func removeDirectory(_ url: URL) { try? FileManager.default.removeItem(at: url) }

    /// The directory the test binaries were built into (`tidings`, `tidings-client`).
    static var binDirectory: URL {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    /// Starts `tidings --port <port> --data-dir <dataDirectory> <arguments>` (port 0: any free one).
    init(port: Int = 0, dataDirectory: URL, arguments: [String] = [], startupTimeout: Double = 20) throws {
        self.dataDirectory = dataDirectory
        process.executableURL = Self.binDirectory.appendingPathComponent("tidings")
        process.arguments = ["--port", String(port), "--data-dir", dataDirectory.path] + arguments
        let stdoutPipe = Pipe()
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        // Drained so the server never blocks on a full pipe; the test does not read its log.
        stderrPipe.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
        try process.run()
        let line = LineReader(stdoutPipe.fileHandleForReading).line(within: startupTimeout)
        guard let line, line.hasPrefix("tidings listening on http://"),
              let portText = line.split(separator: ":").last, let listening = Int(portText) else {
            process.terminate()
            process.waitUntilExit()
            throw StartError(line: line)
        }
        self.port = listening
        url = URL(string: "http://127.0.0.1:\(listening)")!
    }

    struct StartError: Error, CustomStringConvertible {
        let line: String?
        var description: String { "tidings did not start (first line: \(line ?? "none"))" }
    }

    deinit { stop() }

    /// SIGTERM, wait (SIGKILL after `timeout`), and return the exit status. Idempotent.
    @discardableResult
    func stop(timeout: Double = 12) -> Int32 {
        if let exitStatus { return exitStatus }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        stderrPipe.fileHandleForReading.readabilityHandler = nil
        exitStatus = process.terminationStatus
        return process.terminationStatus
    }
}

/// Reads lines from a pipe with a deadline (poll, never a blind sleep).
final class LineReader {
    private let handle: FileHandle
    private var pending: [UInt8] = []

    init(_ handle: FileHandle) { self.handle = handle }

    /// The next line (without its LF), or nil when none is complete within `seconds`.
    func line(within seconds: Double) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return nil }
            var poller = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(left * 1000, 100))) >= 0 else { return nil }
            guard poller.revents != 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(handle.fileDescriptor, &buffer, buffer.count)
            guard count > 0 else { return nil }
            pending.append(contentsOf: buffer[..<count])
        }
    }
}
