import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A response read by ``HTTPConnection``: the status, the header fields in order, the body
/// (de-chunked, never decoded).
public struct HTTPReply: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// First value of a header, case-insensitive.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object (nil when it is not one).
    public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
    /// The body as a ``JSONValue``, compared by value (nil when it is not JSON).
    public var value: JSONValue? { JSONValue.parse(body) }
    /// The body decoded as `T`.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: Data(body)) }
}

/// Why an ``HTTPConnection`` read or connect failed.
public enum HTTPConnectionError: Error, Equatable {
    /// `connect` (or binding the source address) failed with this errno.
    case connectFailed(Int32)
    /// The peer closed the connection (EOF) or reset it.
    case closed
    /// Nothing arrived within the receive timeout.
    case timeout
    /// The bytes were not the HTTP the reader expected.
    case malformed(String)
}

/// The tests' one socket client: one HTTP/1.1 connection over a blocking TCP socket, exact
/// bytes out, parsed replies in (Content-Length, chunked and read-to-close bodies), several
/// requests on one connection (keep-alive). Use it where a higher-level client would hide what a
/// test must see: raw and partial writes, pipelining, half-close (`shutdown(connection.fd,
/// SHUT_WR)`), a slow reader (``setReceiveBuffer(_:)``), the moment the server closes.
///
/// Every read waits at most the receive timeout (``setTimeout(_:)``) and then throws
/// ``HTTPConnectionError/timeout``; a test that expects no answer says so with
/// `XCTAssertThrowsError`.
///
/// ```swift
/// let connection = try HTTPConnection(port: server.port)
/// let reply = try connection.request("PUT", "/preferences/age", json: ["value": 6])
/// connection.write("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")   // raw bytes
/// let next = try connection.readReply()
/// ```
public final class HTTPConnection {
    /// The socket; tests may `shutdown` it or set options on it.
    public let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to `host:port`. `source`: a local address to send from (e.g. `127.0.0.2`,
    /// another loopback client). `timeout`: the receive timeout of every read. `receiveBuffer`:
    /// a small receive buffer set before connecting (see ``setReceiveBuffer(_:)``), so the window
    /// the connection offers is small from its first segment on.
    public init(port: Int, host: String = "127.0.0.1", from source: String? = nil, timeout: Double = 10,
                receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPConnectionError.connectFailed(errno) }
        if let receiveBuffer { setReceiveBuffer(receiveBuffer) }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let error = errno
                close(fd)
                throw HTTPConnectionError.connectFailed(error)
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let error = errno
            close(fd)
            throw HTTPConnectionError.connectFailed(error)
        }
        setTimeout(timeout)
    }

    deinit { close(fd) }

    /// Receive timeout for every following read.
    public func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Shrinks the socket's receive buffer (the kernel doubles the value), so a client that
    /// stops reading makes the server's side back up quickly instead of the kernel absorbing
    /// megabytes on its behalf. On a connected socket the window already offered stays: segments
    /// past the smaller buffer are dropped and the sender backs off (seen: 13 s and more before
    /// the stream flows again once read). A reader that will stall passes `receiveBuffer` to
    /// the initializer instead: the window is small from the start and opens as soon as it reads.
    public func setReceiveBuffer(_ bytes: Int32) {
        var size = bytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    // MARK: Writing

    /// Writes raw bytes (all of them, unless the peer has gone).
    public func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Writes `text` as UTF-8, byte for byte.
    public func write(_ text: String) { write(Array(text.utf8)) }

    /// Sends a request (adds `Host` and, with a body or for POST/PUT/PATCH, `Content-Length`).
    public func send(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { text += "Content-Length: \(body.count)\r\n" }
        write(Array((text + "\r\n").utf8) + body)
    }

    /// Sends a request and reads its reply.
    public func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) throws -> HTTPReply {
        send(method, target, headers: headers, body: body)
        return try readReply(head: method == "HEAD")
    }

    /// Sends `json` (any JSONSerialization value) as an application/json body.
    public func request(_ method: String, _ target: String, headers: [String: String] = [:], json: Any) throws -> HTTPReply {
        var headers = headers
        if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        let body = try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed])
        return try request(method, target, headers: headers, body: Array(body))
    }

    // MARK: Reading

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { buffer += chunk[0..<n]; return }
        if n == 0 { throw HTTPConnectionError.closed }
        if errno == EAGAIN || errno == EWOULDBLOCK { throw HTTPConnectionError.timeout }
        throw HTTPConnectionError.closed
    }

    /// The next line, without its CRLF (or bare LF).
    public func readLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 10) {
                let line = buffer[..<index]
                buffer.removeFirst(index + 1)
                return String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
            }
            try fill()
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// Status line and headers.
    public func readHead() throws -> HTTPReply {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw HTTPConnectionError.malformed(statusLine) }
        var reply = HTTPReply(status: status, headers: [], body: [])
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { continue }
            reply.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return reply
    }

    /// One whole reply (no body for HEAD, 1xx, 204 and 304).
    public func readReply(head: Bool = false) throws -> HTTPReply {
        var reply = try readHead()
        if head || reply.status == 204 || reply.status == 304 || (100..<200).contains(reply.status) { return reply }
        if reply.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while let piece = try readChunk() { reply.body += piece }
        } else if let length = reply.header("Content-Length").flatMap(Int.init) {
            reply.body = try readExactly(length)
        } else {
            while (try? fill()) != nil {}
            reply.body = buffer
            buffer = []
        }
        return reply
    }

    /// The next chunk of a chunked body; nil at the terminating chunk.
    public func readChunk() throws -> [UInt8]? {
        let sizeLine = try readLine()
        guard let size = Int(sizeLine.split(separator: ";").first.map(String.init) ?? "", radix: 16) else {
            throw HTTPConnectionError.malformed("chunk size '\(sizeLine)'")
        }
        if size == 0 { _ = try readLine(); return nil }
        let bytes = try readExactly(size)
        _ = try readLine()
        return bytes
    }

    /// Whatever bytes are buffered, or the next bytes to arrive.
    public func readAnything() throws -> [UInt8] {
        if buffer.isEmpty { try fill() }
        defer { buffer = [] }
        return buffer
    }

    /// Raw bytes up to and including the first `marker`, consumed; nil when the marker has not
    /// arrived within `timeout` seconds or the connection ended first (what arrived stays
    /// buffered).
    public func readUntil(_ marker: String, timeout: Double = 5) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        let needle = Array(marker.utf8)
        while true {
            if let range = buffer.firstRange(of: needle) {
                let text = String(decoding: buffer[..<range.upperBound], as: UTF8.self)
                buffer.removeFirst(range.upperBound)
                return text
            }
            guard Date() < deadline else { return nil }
            do { try fill() } catch HTTPConnectionError.timeout { continue } catch { return nil }
        }
    }

    /// Waits until the server closes the connection; true on EOF/reset, false on timeout.
    public func waitForClose(timeout: Double = 5) -> Bool {
        setTimeout(timeout)
        while true {
            do { try fill() } catch HTTPConnectionError.timeout { return false } catch { return true }
        }
    }
}
