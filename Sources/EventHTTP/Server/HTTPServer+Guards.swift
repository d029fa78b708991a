internal import CLibevent
import HTTPTypes
import Dispatch

/// The server's side of `ConnectionGuard`: installing it, counting connections from accept,
/// and answering the stand-in requests that carry a refusal.
extension HTTPServer {
    func installConnectionGuards(_ http: OpaquePointer) {
        evhttp_set_bevcb(http, { base, context in
            guard let base, let context else { return nil }
            let server = Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue()
            return ConnectionGuard.makeBufferevent(base: base, server: server)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    func guardOpened(_ connectionGuard: ConnectionGuard) {
        guard let filter = connectionGuard.filter else { return }
        guards[filter] = connectionGuard
        limiter.opened()
    }

    /// Counts an accepted connection under its client address; the refusal if it is one too many.
    func admitConnection(address: String) -> FramingRefusal? {
        limiter.admit(address: address)
    }

    /// Hears when evhttp frees `evcon` (the same close callback requests use).
    func watchClose(_ evcon: OpaquePointer) {
        evhttp_connection_set_closecb(evcon, { evcon, context in
            guard let evcon, let context else { return }
            Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().connectionClosed(evcon)
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Forgets the guard of a connection evhttp is freeing.
    func releaseGuard(_ evcon: OpaquePointer) {
        guard let bev = evhttp_connection_get_bufferevent(evcon),
              let connectionGuard = guards.removeValue(forKey: bev) else { return }
        limiter.closed(address: connectionGuard.address)
        connectionGuard.closed()
    }

    /// The refusal as a problem, then the connection closes (nothing after it is read).
    func writeFramingRefusal(_ refusal: FramingRefusal, to raw: RawRequest) {
        var headers: HTTPFields = [:]
        headers[.connection] = "close"
        if refusal.status == .serviceUnavailable { headers[.retryAfter] = "2" }
        var response = Response.problem(status: refusal.status, detail: refusal.detail, headers: headers)
        // The response filters add what every answer carries (e.g. the revision header); the
        // request they see is the stand-in, as nothing of the refused one is trusted.
        let standIn = Request(method: .get, target: "/", headers: [:], body: [],
                              receivedAt: DispatchTime.now().uptimeNanoseconds)
        applyResponseFilters(standIn, &response)
        response.headers[.connection] = "close"
        write(response, to: raw, method: .get)
    }
}
