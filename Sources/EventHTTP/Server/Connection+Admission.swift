internal import CLibevent
import Foundation

/// Admission at accept: the connection reads the peer's address and asks the server's
/// `ConnectionLimiter` (caps in total and per client; trusted proxies count only in the total).
extension Connection {
    /// How long a connection over its client's share may take to send its first head before it
    /// is refused anyway: long enough to tell a stream (200 + `retry:`) from anything else
    /// (503), short enough that silent sockets cannot hold descriptors over the share.
    static let overCapGrace = 1.0

    /// Counts the connection and decides whether it may be served (call once, after `start()`).
    func admit() {
        var on: Int32 = 1
        syscall("setsockopt TCP_NODELAY", tolerating: "it only lowers latency") {
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let peer = Self.peerAddress(fd) ?? "unknown"
        address = peer
        isTrustedProxy = server.configuration.trustedProxies.contains(peer)
        countedAddress = isTrustedProxy ? nil : peer
        // Body bytes count under the peer; a proxy's under the client each head names (`+Head`).
        machine.client = countedAddress
        switch server.admitConnection(address: peer, exempt: isTrustedProxy) {
        case .admitted:
            break
        case .overTotal(let refusal):
            refuse(refusal, head: nil)
        case .overClient(let refusal):
            clientCapRefusal = refusal
            clock = .overCap
            armTimer(Self.overCapGrace)
        }
    }

    static func peerAddress(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        } == 0
        guard ok else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let written: Bool
        switch Int32(storage.ss_family) {
        case AF_INET:
            written = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil
                }
            }
        case AF_INET6:
            written = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil
                }
            }
        default:
            return nil
        }
        guard written else { return nil }
        let result = String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return result.hasPrefix("::ffff:") ? String(result.dropFirst(7)) : result
    }
}
