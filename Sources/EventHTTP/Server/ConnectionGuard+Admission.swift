internal import CLibevent
import Foundation

/// Admission: once evhttp has set the accepted socket, the guard reads the peer's address and
/// asks the server's `ConnectionLimiter` (caps in total and per client; trusted proxies count
/// only in the total).
extension ConnectionGuard {
    /// How long a connection over its client's share may take to send its first head before it
    /// is refused anyway: long enough to tell a stream (200 + `retry:`) from anything else
    /// (503), short enough that silent sockets cannot hold descriptors over the share.
    static let overCapGrace = 1.0

    /// evhttp sets the socket and makes its connection right after its bufferevent callback
    /// returns: check the caps then, before the loop polls again.
    func admitOnNextTurn() {
        let box = Unmanaged.passRetained(CallbackBox { [self] in admitFromTimer() })
        if let event = event_new(base, -1, 0, { _, _, context in
            Unmanaged<CallbackBox>.fromOpaque(context!).takeRetainedValue().body()
        }, box.toOpaque()) {
            event_active(event, Int32(EV_TIMEOUT), 0)
            // Freed on the next turn (an event may not be freed from inside its own callback
            // in every libevent build).
            server?.loop.schedule(after: 0) { event_free(event) }
        } else {
            box.release()
        }
    }

    /// Admits the connection once (nil when admitted, or when it cannot be yet): the refusal
    /// for a connection over the total cap.
    func admit() -> FramingRefusal? {
        guard !admitted, let filter, let server else { return nil }
        let fd = Int32(bufferevent_getfd(filter))
        guard fd >= 0 else { return nil }
        admitted = true
        // evhttp's connection is the callback argument of its bufferevent.
        var evcon: UnsafeMutableRawPointer?
        bufferevent_getcb(filter, nil, nil, nil, &evcon)
        if let evcon { server.watchClose(OpaquePointer(evcon)) }
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
            return nil
        case .overTotal(let refusal):
            return refusal
        case .overClient(let refusal):
            clientCapRefusal = refusal
            clock = .overCap
            armTimer(Self.overCapGrace)
            return nil
        }
    }

    private func admitFromTimer() {
        guard filter != nil, let refusal = admit() else { return }
        refuseLater(refusal)
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
