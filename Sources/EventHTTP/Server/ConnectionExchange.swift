internal import CLibevent
import HTTPTypes

/// One request's exchange on a connection: the `ResponseSink` a socket's responder writes to.
/// It owns the `evhttp_request` until the answer is handed to evhttp (or frees it, when evhttp
/// detached it from a vanished client), and knows where the exchange stands. Loop-thread
/// confined; `Responder.send` reaches it through `onLoop`.
final class ConnectionExchange: ResponseSink {
    enum State { case pending, answered, streaming, gone }

    private unowned let server: HTTPServer
    let connection: Connection
    var rawRequest: RawRequest?
    var state: State = .pending

    init(server: HTTPServer, connection: Connection, rawRequest: RawRequest) {
        self.server = server
        self.connection = connection
        self.rawRequest = rawRequest
    }

    func onLoop(_ body: @escaping @Sendable () -> Void) {
        let loop = server.loop
        if loop.isOnLoopThread { body() } else { loop.execute(body) }
    }

    func checkConfined(_ what: String) { server.loop.checkConfined(what) }

    var isCompleted: Bool {
        server.loop.checkConfined("Responder.isCompleted")
        return state != .pending
    }

    func answer(_ response: Response, to request: Request) {
        guard state == .pending, let raw = rawRequest else { return }
        state = .answered
        rawRequest = nil
        connection.current = nil
        var response = response
        server.applyResponseFilters(request, &response)
        server.write(response, to: raw, method: request.method)
        server.exchangeFinished()
    }

    func startEventStream(for request: Request, retryMilliseconds: Int?, conflate: Bool,
                          keyOf: (([UInt8]) -> String?)?) -> EventStream? {
        precondition(server.loop.isOnLoopThread, "startEventStream off the loop thread")
        guard state == .pending, let raw = rawRequest else { return nil }
        if request.method == .head {
            // Same head as a GET would get, no stream.
            answer(Response(status: .ok, headers: EventStream.headHeaders), to: request)
            return nil
        }
        if server.isDraining || !server.hasRoomForStream(client: request.clientAddress) {
            refuseStream(request)
            return nil
        }
        var head = Response(status: .ok, headers: EventStream.headHeaders)
        server.applyResponseFilters(request, &head)
        guard let stream = server.handOffStream(self, request: request, raw: raw, head: head,
                                                retryMilliseconds: server.jitteredRetry(around: retryMilliseconds),
                                                conflate: conflate, keyOf: keyOf) else {
            // The socket could not leave evhttp (out of descriptors): answer like a full server.
            refuseStream(request)
            return nil
        }
        // The socket now belongs to a worker; evhttp frees the request with its connection.
        state = .streaming
        rawRequest = nil
        connection.current = nil
        server.exchangeFinished()   // a stream is not an in-flight request for shutdown
        return stream
    }

    /// 200, a jittered `retry:` and the end: a browser's EventSource gives up for good on a
    /// non-200, so a refused stream is told to come back a little later.
    private func refuseStream(_ request: Request) {
        if !server.isDraining { server.streamsShed += 1 }
        answer(server.streamRefusal(), to: request)
    }

    /// The hand-off's second step could not move the socket after all (out of descriptors):
    /// the refusal goes out through evhttp, which still holds the request, as on a full server.
    func refuseAfterHandOff(_ raw: RawRequest, request: Request) {
        server.streamsShed += 1
        var refusal = server.streamRefusal()
        server.applyResponseFilters(request, &refusal)
        server.write(refusal, to: raw, method: request.method)
    }

    /// The connection is going away (closecb). Releases what evhttp will not.
    func connectionClosed() {
        if let raw = rawRequest {
            // evhttp detaches an unfinished request from a failed connection and never frees
            // it; a still-attached one is freed by evhttp_connection_free itself.
            if evhttp_request_get_connection(raw) == nil { evhttp_request_free(raw) }
            rawRequest = nil
        }
        let wasPending = state == .pending
        state = .gone
        if wasPending { server.exchangeFinished() }
    }
}
