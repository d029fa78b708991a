public import Foundation
import Synchronization

/// A throwaway PostgreSQL cluster for one test: its own temporary directory, a free loopback
/// port, one database, trust authentication. Call ``destroy()`` when done (also when the test
/// fails — in XCTest: `addTeardownBlock { cluster.destroy() }` right after creating it).
///
/// PostgreSQL refuses to run as root, so when the tests run as root (CI) the cluster belongs to
/// the `postgres` user and every server command runs through `runuser -u postgres`; otherwise
/// it runs as the current user.
///
/// ```swift
/// let cluster = try PostgresCluster()
/// addTeardownBlock { cluster.destroy() }
/// let store = PostgresStore(url: cluster.url, ...)
/// try cluster.stop()      // outage
/// try cluster.start()     // back, same port and data
/// ```
public final class PostgresCluster: @unchecked Sendable {
    /// The loopback port the server listens on (stable across ``stop()`` / ``start()``).
    public let port: Int
    /// The database created for the test.
    public let database: String
    /// The temporary directory holding the data directory, the socket and the server log.
    public let root: URL
    /// `postgres://postgres@127.0.0.1:<port>/<database>`.
    public var url: String { "postgres://postgres@127.0.0.1:\(port)/\(database)" }

    private let binDirectory: String
    private let destroyed = Mutex(false)
    private var watchdog: SpawnedProcess?

    private var dataDirectory: String { root.appendingPathComponent("data").path }
    private var socketDirectory: String { root.appendingPathComponent("socket").path }
    /// The server's log file (read it when a test fails).
    public var logPath: String { root.appendingPathComponent("server.log").path }
    private var serverUser: String? { FixtureProcess.isRoot ? "postgres" : nil }

    /// Creates the cluster (initdb), starts it and creates `database`.
    /// `durable: false` turns fsync off for speed; keep it on when measuring commit throughput.
    public init(database: String = "tidings", durable: Bool = true) throws {
        self.database = database
        binDirectory = try Self.findBinDirectory()
        root = try FixtureProcess.makeDirectory(prefix: "tidings-pg")
        port = try FixtureProcess.freeLoopbackPort()
        do {
            try FileManager.default.createDirectory(atPath: root.appendingPathComponent("socket").path,
                                                    withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: root.appendingPathComponent("server.log").path, contents: nil)
            if FixtureProcess.isRoot {
                try FixtureProcess.run("/bin/chown", ["-R", "postgres:", root.path])
            }
            try FixtureProcess.run("\(binDirectory)/initdb", [
                "-D", dataDirectory, "-A", "trust", "-U", "postgres", "-E", "UTF8",
                "--locale=C", "--no-sync",
            ], as: serverUser, in: root, timeout: 120)
            var settings = "\nlisten_addresses = '127.0.0.1'\nport = \(port)\n"
                + "unix_socket_directories = '\(socketDirectory)'\nmax_connections = 200\n"
            if !durable { settings += "fsync = off\nsynchronous_commit = off\n" }
            try appendToConfiguration(settings)
            let runAs = FixtureProcess.isRoot ? "/usr/sbin/runuser -u postgres -- " : ""
            watchdog = try FixtureProcess.watchdog(cleanup:
                "\(runAs)\(binDirectory)/pg_ctl -D \(FixtureProcess.shellQuoted(dataDirectory)) -m immediate stop; "
                + "rm -rf \(FixtureProcess.shellQuoted(root.path))")
            try start()
            try psql("CREATE DATABASE \"\(database)\"", database: "postgres")
        } catch {
            destroy()
            throw error
        }
    }

    /// Starts the server (again) and waits until it accepts connections.
    public func start() throws {
        try FixtureProcess.run("\(binDirectory)/pg_ctl", [
            "-D", dataDirectory, "-l", logPath, "-w", "-t", "60", "start",
        ], as: serverUser, in: root, timeout: 90)
    }

    /// Stops the server. `immediate` is a crash (no checkpoint; clients cut off at once);
    /// otherwise a fast shutdown (clients disconnected, then a checkpoint).
    public func stop(immediate: Bool = false) throws {
        try FixtureProcess.run("\(binDirectory)/pg_ctl", [
            "-D", dataDirectory, "-m", immediate ? "immediate" : "fast", "-w", "-t", "60", "stop",
        ], as: serverUser, in: root, timeout: 90)
    }

    /// Stops and starts the server (same port, same data).
    public func restart(immediate: Bool = false) throws {
        try stop(immediate: immediate)
        try start()
    }

    /// Runs `sql` with psql over the Unix socket and returns its unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String, database: String? = nil) throws -> String {
        try FixtureProcess.run("\(binDirectory)/psql", [
            "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", socketDirectory, "-p", "\(port)",
            "-U", "postgres", "-d", database ?? self.database, "-c", sql,
        ], as: serverUser, in: root, timeout: 60)
    }

    /// `pg_dump -Fc` of the database into `name` under ``root`` (a backup); returns its path.
    @discardableResult
    public func dump(to name: String) throws -> String {
        let path = root.appendingPathComponent(name).path
        try FixtureProcess.run("\(binDirectory)/pg_dump", [
            "-h", socketDirectory, "-p", "\(port)", "-U", "postgres", "-Fc", "-f", path, database,
        ], as: serverUser, in: root, timeout: 60)
        return path
    }

    /// Restores the dump at `path` (from ``dump(to:)``) into the database in place, in one
    /// transaction: every object the dump holds is dropped and re-created with the dump's rows,
    /// while clients stay connected (what an operator's restore of a backup does).
    public func restore(from path: String) throws {
        try FixtureProcess.run("\(binDirectory)/pg_restore", [
            "-h", socketDirectory, "-p", "\(port)", "-U", "postgres", "--clean", "--if-exists",
            "--single-transaction", "--exit-on-error", "-d", database, path,
        ], as: serverUser, in: root, timeout: 60)
    }

    /// Drops the database (ending every connection to it) and creates it again, empty.
    public func recreateDatabase() throws {
        try psql("DROP DATABASE \"\(database)\" WITH (FORCE)", database: "postgres")
        try psql("CREATE DATABASE \"\(database)\"", database: "postgres")
    }

    /// Stops the server (immediately) if it runs and removes the directory. Safe to call twice.
    public func destroy() {
        let first = destroyed.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        // Also when `start()` failed half-way: a server may run without our knowing it did.
        if FileManager.default.fileExists(atPath: "\(dataDirectory)/postmaster.pid") {
            try? stop(immediate: true)
        }
        try? FileManager.default.removeItem(at: root)
        watchdog?.kill()
    }

    /// The server log so far (for failure messages).
    public var serverLog: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    private func appendToConfiguration(_ text: String) throws {
        let path = "\(dataDirectory)/postgresql.conf"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(text.utf8))
    }

    /// `TIDINGS_PG_BIN`, else the newest /usr/lib/postgresql/<version>/bin with initdb in it.
    static func findBinDirectory() throws -> String {
        if let path = ProcessInfo.processInfo.environment["TIDINGS_PG_BIN"] { return path }
        let base = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        for version in versions where FileManager.default.isExecutableFile(atPath: "\(base)/\(version)/bin/initdb") {
            return "\(base)/\(version)/bin"
        }
        throw FixtureProcess.Failure(command: "find initdb", status: nil,
                                     output: "no PostgreSQL under \(base) (make test installs the postgresql package)")
    }
}
