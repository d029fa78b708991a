import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A loopback HTTP server that answers its n-th connection with the n-th scripted answer (raw
/// bytes) and then closes it; connections past the script are held open, silent, until
/// ``stop()``. It records each request's head, so a test can check what a reconnect sent
/// (`Last-Event-ID`) and when. Plain POSIX sockets, one accept thread.
final class ScriptedEventServer: Sendable {
    /// One request as the server saw it.
    struct Seen: Sendable {
        let at: ContinuousClock.Instant
        /// The request line and header lines.
        let head: [String]

        func header(_ name: String) -> String? {
            head.dropFirst().first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
                .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
        }
    }

    let port: Int
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }
    private let listener: Int32
    private let script: [[UInt8]]
    private struct Connections {
        var seen: [Seen] = []
        var held: [Int32] = []
        var stopped = false
    }

    private let connections = Mutex(Connections())

    static func stream(_ body: String) -> [UInt8] {
        Array(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + body).utf8)
    }

    static func status(_ code: Int, _ json: String) -> [UInt8] {
        Array(("HTTP/1.1 \(code) Status\r\nContent-Type: application/problem+json\r\nContent-Length: \(json.utf8.count)\r\nConnection: close\r\n\r\n" + json).utf8)
    }

    init(script: [[UInt8]]) throws {
        self.script = script
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    var requests: [Seen] { connections.withLock { $0.seen } }

    func stop() {
        let (wasStopped, open) = connections.withLock { connections in
            defer { connections.stopped = true; connections.held = [] }
            return (connections.stopped, connections.held)
        }
        guard !wasStopped else { return }
        // Only shut down: the accept thread closes the listener once it is out of `accept`. Closed
        // here, its number could go to the next test's server before this thread called `accept`
        // again, and this stopped server would take (and drop) that server's first connection.
        shutdown(listener, Int32(SHUT_RDWR))
        for fd in open { close(fd) }
    }

    private func acceptLoop() {
        defer { close(listener) }
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let head = readHead(fd)
            let index: Int? = connections.withLock { connections in
                if connections.stopped { return nil }
                let index = connections.seen.count
                connections.seen.append(Seen(at: .now, head: head))
                if index >= script.count { connections.held.append(fd) }
                return index
            }
            guard let index else {
                close(fd)
                return
            }
            if index < script.count {
                let answer = script[index]
                _ = answer.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                close(fd)
            }
        }
    }

    /// The request head's lines (the client sends no body on a stream request).
    private func readHead(_ fd: Int32) -> [String] {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 65_536, recv(fd, &byte, 1, 0) == 1 {
            bytes.append(byte)
            if bytes.suffix(4) == [13, 10, 13, 10] { break }
        }
        return String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n").filter { !$0.isEmpty }
    }
}
