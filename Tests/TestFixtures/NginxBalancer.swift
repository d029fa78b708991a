public import Foundation
import Synchronization

/// nginx on a free loopback port balancing over Tidings instances, configured with
/// `deploy/nginx.conf` (the file the compose deployment uses) rendered for loopback ports.
/// Call ``stop()`` when done (in XCTest: `addTeardownBlock { balancer.stop() }`).
///
/// ```swift
/// let balancer = try NginxBalancer(upstreamPorts: [a.port, b.port])
/// addTeardownBlock { balancer.stop() }
/// // talk to http://127.0.0.1:\(balancer.port)
/// ```
public final class NginxBalancer: @unchecked Sendable {
    /// The port nginx listens on (127.0.0.1).
    public let port: Int
    /// nginx's prefix directory: configuration, pid, logs and temp files.
    public let prefix: URL
    private var process: SpawnedProcess?
    private var watchdog: SpawnedProcess?
    private let stopped = Mutex(false)

    /// `deploy/nginx.conf` of this checkout (`TIDINGS_NGINX_TEMPLATE` overrides it).
    public static var templatePath: String {
        if let path = ProcessInfo.processInfo.environment["TIDINGS_NGINX_TEMPLATE"] { return path }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/nginx.conf").path
    }

    /// Starts nginx in front of `upstreamPorts` (two, as deploy/nginx.conf names two instances)
    /// and waits until it accepts connections.
    public init(upstreamPorts: [Int], nginx: String = "/usr/sbin/nginx", startupTimeout: TimeInterval = 15) throws {
        guard upstreamPorts.count == 2 else {
            throw FixtureProcess.Failure(command: "nginx", status: nil, output: "deploy/nginx.conf balances exactly two instances")
        }
        prefix = try FixtureProcess.makeDirectory(prefix: "tidings-nginx")
        port = try FixtureProcess.freeLoopbackPort()
        do {
            let template = try String(contentsOfFile: Self.templatePath, encoding: .utf8)
            let site = Self.render(template, values: [
                "TIDINGS_UPSTREAM_A": "127.0.0.1:\(upstreamPorts[0])",
                "TIDINGS_UPSTREAM_B": "127.0.0.1:\(upstreamPorts[1])",
                "TIDINGS_LISTEN_PORT": "127.0.0.1:\(port)",
            ])
            try site.write(to: prefix.appendingPathComponent("tidings.conf"), atomically: true, encoding: .utf8)
            try Self.mainConfiguration(prefix: prefix.path)
                .write(to: prefix.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)

            let process = try SpawnedProcess(nginx, [
                "-p", prefix.path, "-c", prefix.appendingPathComponent("nginx.conf").path, "-g", "daemon off;",
            ], output: prefix.appendingPathComponent("stderr.log").path)
            self.process = process
            watchdog = try FixtureProcess.watchdog(cleanup:
                "kill -TERM \(process.pid); sleep 2; kill -KILL \(process.pid); rm -rf \(FixtureProcess.shellQuoted(prefix.path))")
            let port = self.port
            guard FixtureProcess.wait(timeout: startupTimeout, until: {
                !process.isRunning || FixtureProcess.isAccepting(port: port)
            }), process.isRunning else {
                throw FixtureProcess.Failure(command: "nginx", status: process.poll(), output: errorLog)
            }
        } catch {
            stop()
            throw error
        }
    }

    /// Replaces every `${NAME}` in `template` whose NAME is in `values` (what the nginx image's
    /// envsubst step does with the environment); nginx's own `$variables` stay as they are.
    public static func render(_ template: String, values: [String: String]) -> String {
        values.reduce(template) { text, entry in text.replacingOccurrences(of: "${\(entry.key)}", with: entry.value) }
    }

    /// A minimal main configuration keeping everything (pid, logs, temp files) under `prefix`
    /// and including the rendered site.
    static func mainConfiguration(prefix: String) -> String {
        // As root, workers would switch to `nobody` and could not use the temp directories.
        let user = FixtureProcess.isRoot ? "user root;\n" : ""
        return """
            \(user)worker_processes 1;
            pid \(prefix)/nginx.pid;
            error_log \(prefix)/error.log info;
            events { worker_connections 4096; }
            http {
                access_log \(prefix)/access.log;
                client_body_temp_path \(prefix)/client_body;
                proxy_temp_path \(prefix)/proxy;
                fastcgi_temp_path \(prefix)/fastcgi;
                uwsgi_temp_path \(prefix)/uwsgi;
                scgi_temp_path \(prefix)/scgi;
                include \(prefix)/tidings.conf;
            }

            """
    }

    /// nginx's error log so far (for failure messages).
    public var errorLog: String {
        ["stderr.log", "error.log"].map {
            (try? String(contentsOf: prefix.appendingPathComponent($0), encoding: .utf8)) ?? ""
        }.joined(separator: "\n")
    }

    /// Stops nginx (SIGTERM, then SIGKILL after 5 s) and removes its directory. Safe to call twice.
    public func stop() {
        let first = stopped.withLock { done in
            defer { done = true }
            return !done
        }
        guard first else { return }
        if let process, process.isRunning {
            process.signal(SIGTERM)
            if process.wait(timeout: 5) == nil { process.kill() }
        }
        try? FileManager.default.removeItem(at: prefix)
        watchdog?.kill()
    }
}
