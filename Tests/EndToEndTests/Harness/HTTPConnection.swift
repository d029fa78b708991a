import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A response read from the server.
struct HTTPReply {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// First value of a header, case-insensitive.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
    var text: String { String(decoding: body, as: UTF8.self) }
    /// The body as a JSON object (nil when it is not one).
    var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
    /// The body decoded as `T`.
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: Data(body)) }
}

enum HTTPConnectionError: Error { case connectFailed(Int32), closed, timeout, malformed(String) }

/// One keep-alive HTTP/1.1 connection over a blocking socket: exact bytes out, parsed replies
/// in (Content-Length and chunked bodies). Use it where URLSession hides what a test must see
/// (raw bytes, several requests on one connection, event streams).
///
/// ```swift
/// let connection = try HTTPConnection(port: server.port)
/// let reply = try connection.request("PUT", "/preferences/age", json: ["value": 6])
/// ```
final class HTTPConnection {
    let fd: Int32
    private var buffer: [UInt8] = []

    /// `from`: a local address to send from (e.g. `127.0.0.2`, another loopback client).
    init(port: Int, host: String = "127.0.0.1", from source: String? = nil, timeout: Double = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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
    func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes raw bytes.
    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }
    func write(_ text: String) { write(Array(text.utf8)) }

    /// Sends a request (adds Host and, with a body, Content-Length).
    func send(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { text += "Content-Length: \(body.count)\r\n" }
        write(Array((text + "\r\n").utf8) + body)
    }

    /// Sends a request and reads its reply.
    func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) throws -> HTTPReply {
        send(method, target, headers: headers, body: body)
        return try readReply(head: method == "HEAD")
    }

    /// Sends `json` (any JSONSerialization value) as an application/json body.
    func request(_ method: String, _ target: String, headers: [String: String] = [:], json: Any) throws -> HTTPReply {
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

    func readLine() throws -> String {
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
    func readHead() throws -> HTTPReply {
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

    /// One whole reply.
    func readReply(head: Bool = false) throws -> HTTPReply {
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
    func readChunk() throws -> [UInt8]? {
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
    func readAnything() throws -> [UInt8] {
        if buffer.isEmpty { try fill() }
        defer { buffer = [] }
        return buffer
    }

    /// Waits until the server closes the connection; true on EOF/reset, false on timeout.
    func waitForClose(timeout: Double = 5) -> Bool {
        setTimeout(timeout)
        while true {
            do { try fill() } catch HTTPConnectionError.timeout { return false } catch { return true }
        }
    }
}
