import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking raw-socket HTTP client for tests: exact bytes out, exact bytes in.
final class TestClient {
    struct Reply {
        var status: Int
        var headers: [(String, String)]
        var body: [UInt8]
        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        var text: String { String(decoding: body, as: UTF8.self) }
        var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] }
    }

    let fd: Int32
    private var buffer: [UInt8] = []

    init(port: Int, receiveTimeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { close(fd); throw POSIXError(.ECONNREFUSED) }
        setTimeout(receiveTimeout)
    }

    deinit { close(fd) }

    func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Shrinks the receive buffer so a non-reading client fills up quickly.
    func setReceiveBuffer(_ bytes: Int32) {
        var size = bytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    func write(_ text: String) { write(Array(text.utf8)) }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Reads more bytes into the buffer; false on EOF/timeout.
    @discardableResult
    private func fill() -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return false }
        buffer += chunk[0..<n]
        return true
    }

    private func readLine() -> String? {
        while true {
            if let index = buffer.firstIndex(of: 10) {
                let line = buffer[..<index]
                buffer.removeFirst(index + 1)
                return String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
            }
            guard fill() else { return nil }
        }
    }

    private func readExactly(_ count: Int) -> [UInt8]? {
        while buffer.count < count { guard fill() else { return nil } }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    /// Reads one response (Content-Length or chunked; no body for HEAD).
    func readReply(head: Bool = false) -> Reply? {
        guard let statusLine = readLine() else { return nil }
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        var headers: [(String, String)] = []
        while let line = readLine(), !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var reply = Reply(status: status, headers: headers, body: [])
        if head || status == 204 || status == 304 { return reply }
        if reply.header("Transfer-Encoding")?.lowercased() == "chunked" {
            while let sizeLine = readLine(), let size = Int(sizeLine, radix: 16) {
                if size == 0 { _ = readLine(); break }
                guard let chunk = readExactly(size) else { return nil }
                reply.body += chunk
                _ = readLine()
            }
        } else if let length = reply.header("Content-Length").flatMap(Int.init) {
            guard let body = readExactly(length) else { return nil }
            reply.body = body
        } else {
            while fill() {}
            reply.body = buffer
            buffer = []
        }
        return reply
    }

    func request(_ method: String, _ target: String, headers: [String: String] = [:], body: [UInt8] = []) -> Reply? {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: test\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        write(Array(text.utf8) + body)
        return readReply(head: method == "HEAD")
    }

    /// Reads raw bytes until `marker` appears (or timeout); returns everything read so far.
    func readUntil(_ marker: String, timeout: Double = 5) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        let needle = Array(marker.utf8)
        while Date() < deadline {
            if let range = buffer.firstRange(of: needle) {
                let text = String(decoding: buffer[..<range.upperBound], as: UTF8.self)
                buffer.removeFirst(range.upperBound)
                return text
            }
            if !fill() && Date() >= deadline { break }
        }
        return nil
    }

    /// True when the server closed the connection (EOF) within `timeout`.
    func waitForClose(timeout: Double = 5) -> Bool {
        setTimeout(timeout)
        while true {
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return true }
            if n < 0 { return errno == ECONNRESET }
        }
    }
}
