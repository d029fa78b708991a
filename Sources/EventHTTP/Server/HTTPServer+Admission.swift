internal import CLibevent
import HTTPTypes
import Foundation
import Logging

/// The server's side of admission: accepting, counting connections from accept, and the
/// answers written for refusals (problem details, never a library's page).
extension HTTPServer {
    /// A socket `evconnlistener` accepted: its connection starts reading at once.
    func accepted(_ fd: Int32) {
        let connection = Connection(server: self, fd: fd)
        guard !isDraining, connection.start() else {
            syscall("close", tolerating: "the descriptor is gone either way") { Foundation.close(fd) }
            return
        }
        connections[ObjectIdentifier(connection)] = connection
        limiter.opened()
        connection.admit()
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

    /// A connection closed (`countedSlot`: it still held its slot; a stream's socket keeps it).
    func connectionClosed(_ connection: Connection, countedSlot: Bool) {
        guard connections.removeValue(forKey: ObjectIdentifier(connection)) != nil else { return }
        if countedSlot { limiter.closed(address: connection.countedAddress) }
        if shutdownCompletion != nil { checkShutdown() }
    }

    /// The first request of a connection over its client's share: an event stream (asked
    /// for with `Accept: text/event-stream`, as `EventSource` does) gets 200, a jittered
    /// `retry:` and the end — `EventSource` gives up for good on anything else — and every
    /// other request the 503 problem; the connection then closes.
    func writeClientCapRefusal(_ refusal: FramingRefusal, on connection: Connection, head: RequestHead) {
        guard head.headers[values: .accept].contains(where: { $0.contains("text/event-stream") }) else {
            writeRefusal(refusal, on: connection, minorVersion: head.minorVersion, method: head.method)
            return
        }
        streamsShed += 1
        var response = streamRefusal()
        applyResponseFilters(Request(method: .get, target: "/"), &response)
        response.headers[.connection] = "close"
        write(response, on: connection, method: head.method == .head ? .head : .get, head: head)
    }

    /// An answer decided at a request's head (its body never read), through the response
    /// filters as the routed request's answer; then the connection closes.
    func writeHeadAnswer(_ response: Response, to request: Request, on connection: Connection, minorVersion: Int) {
        var response = response
        applyResponseFilters(request, &response)
        response.headers[.connection] = "close"
        write(response, on: connection, method: request.method,
              head: RequestHead(method: request.method, target: "/", headers: [:], minorVersion: minorVersion))
    }

    /// The refusal as a problem, then the connection closes (nothing after it is read).
    func writeRefusal(_ refusal: FramingRefusal, on connection: Connection, minorVersion: Int, method: HTTPRequest.Method) {
        var headers: HTTPFields = [:]
        if refusal.status == .serviceUnavailable { headers[.retryAfter] = "2" }
        var response = Response.problem(status: refusal.status, detail: refusal.detail, headers: headers)
        // The response filters add what every answer carries (e.g. the revision header); the
        // request they see is a bare one, as nothing of the refused one is trusted.
        applyResponseFilters(Request(method: .get, target: "/"), &response)
        response.headers[.connection] = "close"
        write(response, on: connection, method: method == .head ? .head : .get,
              head: RequestHead(method: .get, target: "/", headers: [:], minorVersion: minorVersion))
    }
}
