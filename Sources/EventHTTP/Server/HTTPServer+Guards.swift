internal import CLibevent
import HTTPTypes
import Dispatch
import Logging

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

    /// Counts an accepted connection under its client address (a trusted proxy's only in the
    /// total); whether it is one too many.
    func admitConnection(address: String, exempt: Bool) -> ConnectionLimiter.Admission {
        let admission = limiter.admit(address: address, exempt: exempt)
        if case .overClient = admission {
            // At most one line a second: a flood of refusals must not become a flood of logs.
            let now = DispatchTime.now().uptimeNanoseconds
            refusalsSinceLog += 1
            if now >= nextRefusalLog {
                nextRefusalLog = now + 1_000_000_000
                logger.notice("connection over the per-client limit",
                              metadata: ["client": "\(address)", "limit": "\(limiter.perClient)",
                                         "refusals": "\(refusalsSinceLog)"])
                refusalsSinceLog = 0
            }
        }
        return admission
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
        limiter.closed(address: connectionGuard.countedAddress)
        connectionGuard.closed()
    }

    /// The first request of a connection over its client's share: an event stream (asked
    /// for with `Accept: text/event-stream`, as `EventSource` does) gets 200, a jittered
    /// `retry:` and the end — `EventSource` gives up for good on anything else — and every
    /// other request the 503 problem; the connection then closes.
    func writeClientCapRefusal(_ refusal: FramingRefusal, to raw: RawRequest, headers: HTTPFields) {
        guard headers[values: .accept].contains(where: { $0.contains("text/event-stream") }) else {
            writeFramingRefusal(refusal, to: raw)
            return
        }
        streamsShed += 1
        var response = streamRefusal()
        let standIn = Request(method: .get, target: "/", headers: [:], body: [],
                              receivedAt: DispatchTime.now().uptimeNanoseconds)
        applyResponseFilters(standIn, &response)
        response.headers[.connection] = "close"
        write(response, to: raw, method: .get)
    }

    /// An answer decided at a request's head (its body never read), through the response
    /// filters as the routed request's answer; then the connection closes.
    func writeHeadAnswer(_ response: Response, to request: Request, raw: RawRequest) {
        var response = response
        applyResponseFilters(request, &response)
        response.headers[.connection] = "close"
        write(response, to: raw, method: request.method)
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
