internal import CLibevent
import Foundation

/// The small system-call sequences the server and its stream workers need, in Swift (the C
/// shim keeps only plain wrappers of what Swift cannot call: variadic `ioctl` and `syscall`).
/// Every failure goes through `syscall`, the one place `errno` is read.
enum SocketCalls {
    /// One non-blocking gathered send of `count` pieces, never raising SIGPIPE; the bytes the
    /// kernel took.
    static func send(_ fd: Int32, _ pieces: UnsafeMutablePointer<iovec>, count: Int) throws(SystemError) -> Int {
        var message = msghdr()
        message.msg_iov = pieces
        message.msg_iovlen = count
        return try syscall("sendmsg") { sendmsg(fd, &message, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// One non-blocking send of `bytes`, never raising SIGPIPE; the bytes the kernel took.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) -> Int {
        try syscall("send") { Foundation.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// Reads and drops what a client sent on a stream (at most 64 KiB a call); false once the
    /// peer closed the socket or it failed.
    static func discardInput(_ fd: Int32) -> Bool {
        let sink = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { sink.deallocate() }
        for _ in 0..<16 {
            do {
                if try syscall("recv", { recv(fd, sink.baseAddress, sink.count, Int32(MSG_DONTWAIT)) }) == 0 { return false }
            } catch {
                return error.isTransient
            }
        }
        return true
    }

    /// Bytes the kernel still holds in a socket's send queue (sent but not yet acknowledged, or
    /// not yet sent); 0 when it cannot tell.
    static func unsentBytes(_ fd: Int32) -> Int {
        var pending: Int32 = 0
        guard (try? syscall("ioctl TIOCOUTQ", { tidings_ioctl_outq(fd, &pending) })) != nil else { return 0 }
        return Int(pending)
    }

    /// The IMF-fixdate of now, for `Date:`.
    static func httpDate() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var text = [CChar](repeating: 0, count: 32)
        let length = strftime(&text, text.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: text.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
