import Foundation
import TestFixtures

/// A tiny HTTP upstream (python3's http.server) standing in for a Tidings instance behind nginx:
/// `GET /whoami` answers its name; `GET /events` sends one SSE event at once and a second one
/// 3 s later, so a test sees whether the proxy passes events on without buffering.
final class Upstream {
    let name: String
    let port: Int
    private let process: SpawnedProcess

    static let script = #"""
        import sys, time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        name, port = sys.argv[1], int(sys.argv[2])
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def do_GET(self):
                if self.path.split("?")[0].endswith("/events"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-cache")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(f"data: first from {name}\n\n".encode()); self.wfile.flush()
                    time.sleep(3)
                    self.wfile.write(f"data: second from {name}\n\n".encode()); self.wfile.flush()
                    self.close_connection = True
                    return
                body = name.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
        ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
        """#

    init(name: String) throws {
        self.name = name
        port = try FixtureProcess.freeLoopbackPort()
        let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? "/usr/bin/python3"
        process = try SpawnedProcess(python, ["-c", Self.script, name, "\(port)"], output: "/dev/null")
        let port = self.port
        guard FixtureProcess.wait(timeout: 10, until: { FixtureProcess.isAccepting(port: port) }) else {
            process.kill()
            throw FixtureProcess.Failure(command: "python3 upstream", status: process.poll(), output: "did not listen")
        }
    }

    func stop() {
        process.kill()
    }
}

/// A minimal blocking HTTP client over a raw socket: sends `request` and reads until `done`
/// holds for what arrived, the peer closes, or `timeout` passes.
func exchange(port: Int, _ request: String, timeout: TimeInterval, until done: (String) -> Bool) throws -> String {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EMFILE) }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    let bytes = Array(request.utf8)
    guard send(fd, bytes, bytes.count, 0) == bytes.count else { throw POSIXError(.EPIPE) }
    var received = Data()
    let deadline = Date().addingTimeInterval(timeout)
    var buffer = [UInt8](repeating: 0, count: 4096)
    while Date() < deadline {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
        if ready <= 0 { continue }
        let count = recv(fd, &buffer, buffer.count, 0)
        if count <= 0 { break }
        received.append(contentsOf: buffer[0..<count])
        if done(String(decoding: received, as: UTF8.self)) { break }
    }
    return String(decoding: received, as: UTF8.self)
}
