import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension HTTPConnection {
    /// Shrinks the socket's receive buffer (the kernel doubles the value), so a client that
    /// stops reading makes the server's side back up quickly instead of the kernel absorbing
    /// megabytes on its behalf.
    func setReceiveBuffer(_ bytes: Int32) {
        var size = bytes
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
}
