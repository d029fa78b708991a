import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// The scripted server itself: a stopped one must not answer for the next one.
///
/// `ReconnectTests.testAConnectionCutMidSnapshotAsksForTheWholeSnapshotAgain` once saw its server
/// record no connection while its client got "Empty reply from server" and waited out the
/// policy's 60 s: the previous test's server had closed its listener while its accept thread was
/// still finishing an answer; the next server's socket took the same descriptor number, and the
/// old thread's next `accept` took the new server's first connection and dropped it (stopped).
final class ScriptedEventServerTests: XCTestCase {
    func testAStoppedServerTakesNoConnectionOfTheNextOne() throws {
        // The old server's thread is held in `send` (12 MB, three times what the socket buffers
        // hold, to a client that reads none of it) while the server is stopped.
        let old = try ScriptedEventServer(script: [ScriptedEventServer.stream(String(repeating: ": pad\n", count: 2 << 20))])
        defer { old.stop() }
        let first = try Self.connect(old.port, receiveBuffer: 64 << 10)
        Self.send(first, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(Self.wait { old.requests.count == 1 })
        old.stop()

        let answers = (0..<3).map { ScriptedEventServer.status(204 + $0, "{}") }
        let next = try ScriptedEventServer(script: answers)
        defer { next.stop() }
        // The old thread's `send` fails now; it goes back to `accept` with its listener's number.
        close(first)
        Thread.sleep(forTimeInterval: 0.3)
        // Accept threads are woken in the order they waited: with the old thread waiting too,
        // one of these would be taken by it and closed unanswered.
        for answer in answers {
            let fd = try Self.connect(next.port)
            defer { close(fd) }
            Self.send(fd, "GET /events HTTP/1.1\r\nHost: x\r\n\r\n")
            XCTAssertEqual(String(decoding: Self.readAll(fd), as: UTF8.self), String(decoding: answer, as: UTF8.self),
                           "the next server's script, in order")
        }
        XCTAssertEqual(next.requests.count, 3)
    }

    private static func connect(_ port: Int, receiveBuffer: Int32? = nil) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
        return fd
    }

    private static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything until the server closes (or 5 s pass without a byte).
    private static func readAll(_ fd: Int32) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return bytes }
            bytes += buffer[0..<count]
        }
    }

    private static func wait(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if condition() { return true }
            usleep(5_000)
        }
        return condition()
    }
}
