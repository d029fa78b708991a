public import Foundation
import Synchronization

/// A child process started with `posix_spawn` and reaped with `waitpid`: stdin from
/// /dev/null, stdout appended to one file and stderr to the same file or another.
///
/// The child inherits no other descriptor of the test process (`closefrom(3)` in the child):
/// a server started by a test must not hold the test's client sockets or an upstream's
/// listening socket open, or a test that closes one would wait for an EOF that never comes.
public final class SpawnedProcess: Sendable {
    public let pid: pid_t
    private let exitStatus = Mutex<Int32?>(nil)

    /// Starts `executable arguments`. `errors`: a separate file for stderr (nil: stderr goes
    /// to `output` too). `environment`: the child's whole environment (nil: the test's own).
    public init(_ executable: String, _ arguments: [String], output: String, errors: String? = nil,
                environment: [String: String]? = nil, directory: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let errors {
            posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
        if let directory { _ = directory }  // (cwd is inherited; every path we pass is absolute)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentStrings: [UnsafeMutablePointer<CChar>?]? = environment.map { variables in
            variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        }
        defer { environmentStrings?.forEach { free($0) } }
        var pid: pid_t = 0
        let result = environmentStrings.map { strings in
            strings.withUnsafeBufferPointer { posix_spawn(&pid, executable, &actions, nil, argv, $0.baseAddress) }
        } ?? posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard result == 0 else {
            throw FixtureProcess.Failure(command: executable, status: nil, output: "posix_spawn failed: \(String(cString: strerror(result)))")
        }
        self.pid = pid
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift's Glibc module
    /// does not show (it sits behind `_GNU_SOURCE`).
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// The exit status (128 + signal when killed) once the child ended, reaping it; nil while it runs.
    public func poll() -> Int32? {
        exitStatus.withLock { exitStatus in
            if let exitStatus { return exitStatus }
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            guard result == pid else { return nil }
            let code = status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            exitStatus = code
            return code
        }
    }

    public var isRunning: Bool { poll() == nil }

    /// Waits up to `timeout` seconds for the child to end; its exit status, or nil if it still runs.
    public func wait(timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = poll() { return status }
            if Date() > deadline { return nil }
            usleep(5_000)
        }
    }

    /// Sends `signal` to the child (if it still runs).
    public func signal(_ signal: Int32) {
        if isRunning { Foundation.kill(pid, signal) }
    }

    /// SIGKILL, then reap.
    public func kill() {
        signal(SIGKILL)
        _ = wait(timeout: 5)
    }
}
