import Foundation
import TestFixtures
import TidingsTesting
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A real HTTP upstream on an ephemeral loopback port for the posts tests, with answers the
/// test controls: posts (with or without an `ETag`, honouring `If-None-Match`), a status, a
/// body that is not JSON, JSON that is not an array of posts, a body over a limit (announced
/// or chunked), a delay before any of these, or a hang. It records every request (time, path,
/// headers) and every connection, and closes each connection after answering (so a stopped
/// server refuses the next request rather than answering on an old keep-alive connection) —
/// unless ``keepAlive`` says to answer further requests on it (for posts, statuses and garbage).
///
/// Plain POSIX sockets: an accept thread, one thread per connection (so a hanging answer never
/// delays another). State is behind a `Mutex`.
///
/// ```swift
/// let upstream = try UpstreamServer()
/// upstream.behaviour = .posts(#"[{"id":1,"title":"t","body":"b"}]"#, etag: "v1")
/// let server = try TidingsProcess(arguments: ["--feed-url", upstream.url])
/// ```
final class UpstreamServer: Sendable {
    enum Behaviour: Sendable {
        /// 200 with `json`; with `etag`, a matching `If-None-Match` gets 304.
        case posts(String, etag: String? = nil)
        /// This status with a small JSON body.
        case status(Int)
        /// 200 `application/json` whose body is not JSON.
        case garbage
        /// 200 with valid JSON, e.g. an object, or an array of wrong elements.
        case json(String)
        /// 200 with `bytes` bytes of a valid-looking JSON array; `chunked` hides the length.
        case huge(bytes: Int, chunked: Bool)
        /// Waits `seconds`, then behaves like `then`.
        indirect case delayed(Double, then: Behaviour)
        /// Never answers (until the server stops).
        case hang
        /// Sends the head and then one body byte every 200 ms for 10 s: never idle, never done.
        case trickle
        /// 200 with `Content-Encoding: gzip` and a body that inflates to `inflated` bytes of
        /// JSON whitespace inside `[ ]` (about 1/160 of that on the wire), whatever was asked.
        case gzipBomb(inflated: Int)
        /// 302 to `location`.
        case redirect(String)
        /// 200 with an identity body that never ends (no `Content-Length`, close-delimited),
        /// written as fast as the socket takes it until the reader goes away.
        case endless
        /// 200 whose head is `kibibytes` KiB of fields, then a valid feed.
        case hugeHead(kibibytes: Int)
    }

    /// One request as the upstream saw it.
    struct Seen: Sendable {
        let at: Date
        let path: String
        /// Header names lower-cased.
        let headers: [String: String]
    }

    private struct State {
        var behaviour: Behaviour = .posts("[]")
        var seen: [Seen] = []
        var connections = 0
        var keepAlive = false
        var stopped = false
    }

    let port: Int
    private let listener: Int32
    private let state = Mutex(State())
    private let stopSignal = DispatchSemaphore(value: 0)

    /// `http://127.0.0.1:<port>/posts`.
    var url: String { "http://127.0.0.1:\(port)/posts" }

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 256) == 0 else {
            close(fd)
            throw HTTPConnectionError.connectFailed(errno)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    /// What the next requests get.
    var behaviour: Behaviour {
        get { state.withLock { $0.behaviour } }
        set { state.withLock { $0.behaviour = newValue } }
    }

    /// Whether connections stay open for further requests (keep-alive) after a posts, status or
    /// garbage answer.
    var keepAlive: Bool {
        get { state.withLock { $0.keepAlive } }
        set { state.withLock { $0.keepAlive = newValue } }
    }

    /// Connections accepted so far.
    var connectionCount: Int { state.withLock { $0.connections } }

    /// Every request so far, oldest first.
    var requests: [Seen] { state.withLock { $0.seen } }
    var requestCount: Int { state.withLock { $0.seen.count } }

    /// Stops listening (new connections are refused) and ends hanging answers. Idempotent.
    func stop() {
        let first = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard first else { return }
        // Only shut down: the accept thread closes the listener once it is out of `accept`, so
        // its number cannot go to the next test's socket while this thread may still accept on it.
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        stopSignal.signal()
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    // MARK: Serving

    private func acceptLoop() {
        defer { close(listener) }
        while !isStopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            state.withLock { $0.connections += 1 }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while let (path, headers) = readHead(fd) {
            let (behaviour, keepAlive) = state.withLock { state in
                state.seen.append(Seen(at: Date(), path: path, headers: headers))
                return (state.behaviour, state.keepAlive)
            }
            answer(fd, behaviour, headers: headers, keepAlive: keepAlive)
            guard keepAlive, !isStopped, behaviour.answersWhole else { return }
        }
    }

    private func answer(_ fd: Int32, _ behaviour: Behaviour, headers: [String: String], keepAlive: Bool = false) {
        switch behaviour {
        case let .posts(json, etag):
            if let etag, headers["if-none-match"] == "\"\(etag)\"" {
                write(fd, status: 304, headers: ["ETag": "\"\(etag)\""], body: [], keepAlive: keepAlive)
            } else {
                write(fd, status: 200, headers: etag.map { ["ETag": "\"\($0)\""] } ?? [:], body: Array(json.utf8),
                      keepAlive: keepAlive)
            }
        case let .status(code):
            write(fd, status: code, headers: [:], body: Array(#"{"error":"upstream says no"}"#.utf8), keepAlive: keepAlive)
        case .garbage:
            write(fd, status: 200, headers: [:], body: Array("<html>this is not JSON</html>".utf8), keepAlive: keepAlive)
        case let .json(text):
            write(fd, status: 200, headers: [:], body: Array(text.utf8), keepAlive: keepAlive)
        case let .huge(count, chunked):
            writeHuge(fd, bytes: count, chunked: chunked)
        case let .delayed(seconds, then):
            if stopSignal.wait(timeout: .now() + seconds) == .success {
                stopSignal.signal()  // let the others see it too
                return
            }
            answer(fd, then, headers: headers, keepAlive: keepAlive)
        case .hang:
            _ = stopSignal.wait(timeout: .now() + 60)
            stopSignal.signal()
        case let .gzipBomb(inflated):
            let body = GzipBomb.make(inflated: inflated)
            send(fd, Array("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body)
        case let .redirect(location):
            write(fd, status: 302, headers: ["Location": location], body: [])
        case let .hugeHead(kibibytes):
            var head = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
            for index in 0..<kibibytes { head += "X-Filler-\(index): \(String(repeating: "f", count: 1000))\r\n" }
            send(fd, Array((head + "\r\n[]").utf8))
        case .endless:
            guard send(fd, Array("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n[".utf8)) else { return }
            let piece = [UInt8](repeating: UInt8(ascii: " "), count: 256 << 10)
            while !isStopped, send(fd, piece) {}
        case .trickle:
            guard send(fd, Array("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n[".utf8)) else { return }
            for _ in 0..<49 {
                if stopSignal.wait(timeout: .now() + 0.2) == .success { stopSignal.signal(); return }
                guard send(fd, [UInt8(ascii: " ")]) else { return }
            }
        }
    }

    private func readHead(_ fd: Int32) -> (String, [String: String])? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !bytes.ends(with: [13, 10, 13, 10]) {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return nil }
            bytes += chunk[0..<n]
            if bytes.count > 65536 { return nil }
        }
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (String(requestLine[1]), headers)
    }

    private func write(_ fd: Int32, status: Int, headers: [String: String], body: [UInt8], keepAlive: Bool = false) {
        var head = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Status")\r\n" + (keepAlive ? "" : "Connection: close\r\n")
        if status != 304 {
            head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n"
        }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        send(fd, Array((head + "\r\n").utf8) + body)
    }

    /// `[` + `0,` repeated + `0]`: valid JSON, `count` bytes, written in 64 KiB pieces.
    private func writeHuge(_ fd: Int32, bytes count: Int, chunked: Bool) {
        var head = "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Type: application/json\r\n"
        head += chunked ? "Transfer-Encoding: chunked\r\n\r\n" : "Content-Length: \(count)\r\n\r\n"
        guard send(fd, Array(head.utf8)) else { return }
        var remaining = count - 1
        let piece = [UInt8](repeating: 0, count: 65536).enumerated().map { $0.offset % 2 == 0 ? UInt8(ascii: "0") : UInt8(ascii: ",") }
        func emit(_ bytes: [UInt8]) -> Bool {
            chunked ? send(fd, Array((String(bytes.count, radix: 16) + "\r\n").utf8) + bytes + [13, 10]) : send(fd, bytes)
        }
        guard emit([UInt8(ascii: "[")]) else { return }
        while remaining > 0 {
            // Keep pieces even-sized so "0," pairs stay aligned; the last one ends with "0]".
            let size = min(piece.count, remaining)
            if size == remaining {
                var last = Array(piece[0..<size])
                last[size - 1] = UInt8(ascii: "]")
                if size >= 2 { last[size - 2] = UInt8(ascii: "0") }
                guard emit(last) else { return }
            } else {
                guard emit(Array(piece[0..<size])) else { return }
            }
            remaining -= size
        }
        if chunked { _ = send(fd, Array("0\r\n\r\n".utf8)) }
    }

    @discardableResult
    private func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}

extension UpstreamServer.Behaviour {
    /// Whether the answer is complete and framed (so the connection can carry another one).
    var answersWhole: Bool {
        switch self {
        case .posts, .status, .garbage, .json: true
        case let .delayed(_, then): then.answersWhole
        default: false
        }
    }
}
