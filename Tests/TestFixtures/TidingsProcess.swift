public import Foundation

/// The tests' one launcher of the real `tidings` executable: on a loopback port (an ephemeral
/// one unless given, so a restart can take the same one), with a `--data-dir` (a fresh temporary
/// directory it removes, or the test's own, which it leaves, so a second process can start on
/// the same data), stdout and stderr captured in files (never a pipe the server could fill).
/// It waits for the listening line on stdout, the event that proves the server accepts.
///
/// ```swift
/// let server = try TidingsProcess(arguments: ["--heartbeat", "1"])
/// defer { server.stop() }
/// let reply = try server.get("/healthz")
/// XCTAssertEqual(reply.status, 200)
/// XCTAssertEqual(server.stop(), 0)          // SIGTERM, wait, exit status
/// ```
///
/// Started with `posix_spawn` and reaped with `waitpid` (``SpawnedProcess``): Foundation's
/// `Process` on Linux has missed a child's exit (a zombie, `isRunning` true for ever).
public final class TidingsProcess {
    /// The server process.
    public let child: SpawnedProcess
    /// Its process id (for signals and /proc).
    public var pid: pid_t { child.pid }
    /// The port from the listening line.
    public let port: Int
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// The `--data-dir` (a fresh temporary directory unless given; removed by `stop` if ours).
    public let dataDirectory: URL
    private let ownsDataDirectory: Bool
    private let stdoutFile: URL
    private let stderrFile: URL
    private var exitStatus: Int32?
    private var finalLog: String?

    /// `baseURL` (the name client libraries use).
    public var url: URL { baseURL }

    /// Everything the server wrote to stderr so far (its log), also after ``stop(signal:timeout:)``.
    public var log: String {
        if let finalLog { return finalLog }
        return (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
    }

    /// The directory the test binaries were built into (`tidings`, `tidings-client`, …): next
    /// to the `.xctest` bundle, else next to the running program.
    public static var binDirectory: URL {
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent()
        }
        let program = CommandLine.arguments.first.map(URL.init(fileURLWithPath:))
        return program?.deletingLastPathComponent() ?? URL(fileURLWithPath: ".build/debug")
    }

    /// The built `tidings` binary: `TIDINGS_EXECUTABLE`, else `tidings` in ``binDirectory``.
    public static var executableURL: URL {
        if let path = ProcessInfo.processInfo.environment["TIDINGS_EXECUTABLE"] { return URL(fileURLWithPath: path) }
        return binDirectory.appendingPathComponent("tidings")
    }

    /// A fresh path under the temporary directory (not created), for a `--data-dir` the test
    /// owns (and removes with ``removeDirectory(_:)``) or any other scratch file.
    public static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tidings-test-\(UUID().uuidString)")
    }

    /// Removes `url` and everything in it, if it exists.
    public static func removeDirectory(_ url: URL) { try? FileManager.default.removeItem(at: url) }

    /// Starts `tidings --port <port> --data-dir <dir> <arguments>` and waits for its listening
    /// line. `port` 0: any free one. `dataDirectory` nil: a fresh temporary one, removed on stop.
    /// `environment` is added to the test's own environment.
    public init(arguments: [String] = [], environment: [String: String] = [:], dataDirectory: URL? = nil,
                port: Int = 0, startupTimeout: Double = 20) throws {
        if let dataDirectory {
            self.dataDirectory = dataDirectory
            ownsDataDirectory = false
        } else {
            self.dataDirectory = Self.temporaryDirectory()
            ownsDataDirectory = true
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("tidings-output-\(UUID().uuidString)")
        stdoutFile = scratch.appendingPathExtension("out")
        stderrFile = scratch.appendingPathExtension("log")
        let arguments = ["--port", String(port), "--data-dir", self.dataDirectory.path] + arguments
        let child: SpawnedProcess
        do {
            child = try SpawnedProcess(
                Self.executableURL.path, arguments, output: stdoutFile.path, errors: stderrFile.path,
                environment: ProcessInfo.processInfo.environment.merging(environment) { $1 })
        } catch {
            if ownsDataDirectory { Self.removeDirectory(self.dataDirectory) }
            throw error
        }

        self.child = child
        // The first stdout line is the listening line.
        let (stdoutFile, stderrFile, dataDirectory) = (stdoutFile, stderrFile, self.dataDirectory)
        let line = Self.firstLine(of: stdoutFile, from: child, timeout: startupTimeout)
        guard let line, line.hasPrefix("tidings listening on http://"),
              let portText = line.split(separator: ":").last, let listening = Int(portText) else {
            if child.poll() == nil { child.kill() }
            let status = child.poll() ?? -1
            let log = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
            // `deinit` does not run for an object whose init threw, so clean up here.
            for file in [stdoutFile, stderrFile] { Self.removeDirectory(file) }
            if ownsDataDirectory { Self.removeDirectory(dataDirectory) }
            throw StartError(line: line, log: log, status: status)
        }
        self.port = listening
        baseURL = URL(string: "http://127.0.0.1:\(listening)")!
    }

    /// The server did not print its listening line: `line` is what it printed first (nil: nothing,
    /// or it exited), `log` its stderr, `status` its exit status (128 + signal when killed).
    public struct StartError: Error, CustomStringConvertible {
        public var line: String?
        public var log: String
        public var status: Int32
        public var description: String { "tidings did not start (line: \(line ?? "none"), status \(status)); log:\n\(log)" }
    }

    /// The first complete line of `file`, which `child` writes: nil when the child exits first
    /// or `timeout` passes.
    private static func firstLine(of file: URL, from child: SpawnedProcess, timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let exited = child.poll() != nil
            if let bytes = try? Data(contentsOf: file), let newline = bytes.firstIndex(of: 10) {
                return String(decoding: bytes[..<newline], as: UTF8.self)
            }
            if exited || Date() > deadline { return nil }
            usleep(5_000)
        }
    }

    deinit { stop() }

    /// Sends `signal` (SIGTERM by default), waits up to `timeout` seconds for the exit and returns
    /// the exit status (128 + signal when a signal ended it; -1 if it had to be killed after the
    /// timeout). Keeps the log, removes the data directory if it is ours. Idempotent.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 12) -> Int32 {
        if let exitStatus { return exitStatus }
        child.signal(signal)
        var status: Int32 = -1
        if let exited = child.wait(timeout: timeout) { status = exited } else { child.kill() }
        finalLog = (try? String(contentsOf: stderrFile, encoding: .utf8)) ?? ""
        for file in [stdoutFile, stderrFile] { Self.removeDirectory(file) }
        exitStatus = status
        if ownsDataDirectory { Self.removeDirectory(dataDirectory) }
        return status
    }

    /// Sends `signal` to the server (if it still runs), without waiting.
    public func signal(_ signal: Int32) { child.signal(signal) }

    /// Waits up to `timeout` seconds for the server to exit by itself (or by a signal a test
    /// sent); its exit status, or nil while it still runs.
    @discardableResult
    public func waitForExit(timeout: Double = 12) -> Int32? { child.wait(timeout: timeout) }

    /// Whether the process is still running.
    public var isRunning: Bool { child.isRunning }

    // MARK: HTTP (each call opens a fresh connection)

    /// A new keep-alive connection to the server.
    public func connect(timeout: Double = 10, receiveBuffer: Int32? = nil) throws -> HTTPConnection {
        try HTTPConnection(port: port, timeout: timeout, receiveBuffer: receiveBuffer)
    }

    /// One request on a fresh connection.
    public func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) throws -> HTTPReply {
        try connect().request(method, target, headers: headers, body: body)
    }

    /// One JSON request on a fresh connection.
    public func request(_ method: String, _ target: String, headers: [String: String] = [:], json: Any) throws -> HTTPReply {
        try connect().request(method, target, headers: headers, json: json)
    }

    /// `GET target` on a fresh connection.
    public func get(_ target: String, headers: [String: String] = [:]) throws -> HTTPReply {
        try request("GET", target, headers: headers)
    }
}
