import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay on a free loopback port to `127.0.0.1:<target>` that a test can pause: while
/// paused it forwards nothing in either direction (the bytes wait in the kernel's buffers), so
/// a process connected through it — say a Tidings instance to its PostgreSQL — sees its
/// queries hang and hears of no other instance's commits, exactly as over a stalled network,
/// until ``resume()``. Plain POSIX sockets: an accept thread and two pump threads per
/// connection.
///
/// ```swift
/// let relay = try PausableRelay(to: cluster.port)
/// defer { relay.stop() }
/// relay.pause()
/// // ... the other instance commits; this one decides on what it saw before ...
/// relay.resume()
/// ```
public final class PausableRelay: Sendable {
    /// The port to connect to instead of the target's.
    public let port: Int
    private let target: Int
    private let listener: Int32

    private struct State {
        var paused = false
        var stopped = false
        var sockets: [Int32] = []
    }

    private let state = Mutex(State())

    public init(to target: Int) throws {
        self.target = target
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
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

    /// Stops forwarding (in both directions) until ``resume()``.
    public func pause() { state.withLock { $0.paused = true } }

    public func resume() { state.withLock { $0.paused = false } }

    /// Closes the listener and every relayed connection. Idempotent.
    public func stop() {
        // Under the lock: a relayed socket is closed (and its number free for anyone) only under
        // it too, so this never shuts down a descriptor that names another connection by now.
        let first = state.withLock { state in
            guard !state.stopped else { return false }
            state.stopped = true
            for fd in state.sockets { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        // Only shut down: the accept thread closes the listener once it is out of `accept`, so
        // its number cannot go to another fixture's socket while this thread may still use it.
        if first { Glibc.shutdown(listener, Int32(SHUT_RDWR)) }
    }

    private var isPaused: Bool { state.withLock { $0.paused } }
    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
        defer { close(listener) }
        while !isStopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(target).bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                close(server)
                close(client)
                continue
            }
            let relaying = state.withLock { state in
                if !state.stopped { state.sockets += [client, server] }
                return !state.stopped
            }
            guard relaying else {
                close(server)
                close(client)
                return
            }
            let finished = Mutex(0)
            for (from, to) in [(client, server), (server, client)] {
                Thread.detachNewThread { [self] in
                    pump(from: from, to: to)
                    Glibc.shutdown(to, Int32(SHUT_WR))
                    // The second pump to end closes both.
                    if finished.withLock({ count in count += 1; return count }) == 2 {
                        state.withLock { state in
                            state.sockets.removeAll { $0 == from || $0 == to }
                            close(from)
                            close(to)
                        }
                    }
                }
            }
        }
    }

    /// Copies `from` to `to` until either end closes; while paused, reads nothing.
    private func pump(from: Int32, to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            while isPaused, !isStopped { usleep(2_000) }
            if isStopped { return }
            var poller = pollfd(fd: from, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, 20)
            if ready == 0 { continue }
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            // Readable, but a pause that began meanwhile holds these bytes back too.
            if isPaused { continue }
            let count = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return }
            var sent = 0
            while sent < count {
                let n = buffer.withUnsafeBytes { send(to, $0.baseAddress! + sent, count - sent, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return }
                sent += n
            }
        }
    }
}
