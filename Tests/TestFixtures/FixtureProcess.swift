public import Foundation

/// Runs helper programs (initdb, pg_ctl, psql, nginx) for test fixtures.
///
/// Output goes to a file, never a pipe, and children are spawned and reaped directly
/// (``SpawnedProcess``), not through Foundation's `Process`: `pg_ctl start` leaves a server
/// running that inherits the parent's descriptors, and `Process` on Linux then never reports
/// pg_ctl's exit.
public enum FixtureProcess {
    /// A helper program failed or did not finish in time.
    public struct Failure: Error, CustomStringConvertible {
        public var command: String
        public var status: Int32?
        public var output: String
        public init(command: String, status: Int32?, output: String) {
            self.command = command
            self.status = status
            self.output = output
        }

        public var description: String {
            "`\(command)` \(status.map { "exited with \($0)" } ?? "timed out"):\n\(output)"
        }
    }

    /// Whether this process runs as root (CI does; PostgreSQL refuses to run as root).
    public static var isRoot: Bool { geteuid() == 0 }

    /// Runs `executable arguments`, as `user` when given and we are root (through `runuser`),
    /// waits at most `timeout` seconds (then kills it) and returns its combined output.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], as user: String? = nil,
        in directory: URL? = nil, timeout: TimeInterval = 60
    ) throws -> String {
        var executable = executable
        var arguments = arguments
        if let user, isRoot {
            arguments = ["-u", user, "--", executable] + arguments
            executable = "/usr/sbin/runuser"
        }
        let outputURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("tidings-fixture-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let command = ([executable] + arguments).joined(separator: " ")
        let child = try SpawnedProcess(executable, arguments, output: outputURL.path, directory: directory?.path)
        let status = child.wait(timeout: timeout)
        let text = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        guard let status else {
            child.kill()
            throw Failure(command: command, status: nil, output: text)
        }
        guard status == 0 else { throw Failure(command: command, status: status, output: text) }
        return text
    }

    /// A shell that runs `cleanup` once this (test) process has died without cleaning up — a
    /// crash or a killed test run must not leave servers behind. Kill it (``SpawnedProcess/kill()``)
    /// after a normal cleanup.
    ///
    /// It runs in a session of its own (`setsid`, which execs the shell in place, so its pid
    /// stays the one `kill()` signals): a test runner that kills a test's process group (a job
    /// past its time limit) would otherwise kill the watchdog with it, and leave the server —
    /// a PostgreSQL cluster, which detaches from the test — running.
    public static func watchdog(cleanup: String) throws -> SpawnedProcess {
        let script = "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(cleanup)"
        if FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid") {
            return try SpawnedProcess("/usr/bin/setsid", ["/bin/sh", "-c", script], output: "/dev/null")
        }
        return try SpawnedProcess("/bin/sh", ["-c", script], output: "/dev/null")
    }

    /// `text` quoted for /bin/sh.
    public static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago (the kernel picked it).
    public static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw POSIXError(.EINVAL) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` right now.
    public static func isAccepting(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }

    /// Polls `condition` every 20 ms until it holds or `timeout` passes; returns whether it held.
    public static func wait(timeout: TimeInterval, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            usleep(20_000)
        }
        return true
    }

    /// A fresh directory under the temp dir, readable by everyone (so a helper user can enter it).
    static func makeDirectory(prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(prefix)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        return url
    }
}
