import HTTPTypes

/// One request's exchange on a connection: the `ResponseSink` a socket's responder writes to.
/// It knows where the exchange stands and writes the answer into its connection. Loop-thread
/// confined; `Responder.send` reaches it through `onLoop`.
final class ConnectionExchange: ResponseSink {
    enum State { case pending, answered, streaming, gone }

    private unowned let server: HTTPServer
    let connection: Connection
    /// The head as read (its version and keep-alive shape the answer).
    let head: RequestHead
    var state: State = .pending

    init(server: HTTPServer, connection: Connection, head: RequestHead) {
        self.server = server
        self.connection = connection
        self.head = head
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
        guard state == .pending else { return }
        state = .answered
        var response = response
        server.applyResponseFilters(request, &response)
        server.write(response, on: connection, method: request.method, head: head)
        server.exchangeFinished()
        connection.answered()
    }

    func startEventStream(for request: Request, retryMilliseconds: Int?, conflate: Bool,
                          keyOf: (([UInt8]) -> String?)?) -> EventStream? {
        precondition(server.loop.isOnLoopThread, "startEventStream off the loop thread")
        guard state == .pending else { return nil }
        if request.method == .head {
            // Same head as a GET would get, no stream.
            answer(Response(status: .ok, headers: EventStream.headHeaders), to: request)
            return nil
        }
        if server.isDraining || !server.hasRoomForStream(client: request.clientAddress) {
            refuseStream(request)
            return nil
        }
        var streamHead = Response(status: .ok, headers: EventStream.headHeaders)
        server.applyResponseFilters(request, &streamHead)
        let stream = server.handOffStream(connection, request: request, minorVersion: head.minorVersion, head: streamHead,
                                          retryMilliseconds: server.jitteredRetry(around: retryMilliseconds),
                                          conflate: conflate, keyOf: keyOf)
        state = .streaming
        server.exchangeFinished()   // a stream is not an in-flight request for shutdown
        return stream
    }

    /// 200, a jittered `retry:` and the end: a browser's EventSource gives up for good on a
    /// non-200, so a refused stream is told to come back a little later.
    private func refuseStream(_ request: Request) {
        if !server.isDraining { server.streamsShed += 1 }
        answer(server.streamRefusal(), to: request)
    }

    /// The connection closed before the answer.
    func connectionClosed() {
        let wasPending = state == .pending
        state = .gone
        if wasPending { server.exchangeFinished() }
    }
}
