internal import CLibevent
import HTTPTypes

/// Answers one request, now or later, exactly once.
///
/// A handler may keep the responder and answer after asynchronous work. Every method is safe
/// from any thread: off the loop thread the call hops to the loop (state is only touched
/// there, which is why the type can be `Sendable`). A second answer is ignored; answering a
/// client that has gone away is a harmless no-op.
///
/// ```swift
/// router.get("/slow") { _, responder in
///     Task { let value = await work(); responder.send(.json(value)) }
/// }
/// ```
///
/// It is also the server's record of the exchange (one object per request, not two): the
/// `evhttp_request` it owns until the answer is handed to evhttp (or frees, when evhttp
/// detached it from a vanished client), and where the exchange stands. Loop-thread confined.
///
/// `@unchecked Sendable`: every stored member is confined to the server's loop thread. `send`
/// hops there from any other thread; the other members check the confinement
/// (`EventLoop.checkConfined`, a precondition in `startEventStream`), in process through
/// `InProcessExchange`'s main-queue precondition.
public final class Responder: @unchecked Sendable {
    enum State { case pending, answered, streaming, gone }

    /// The server and connection (nil when the router runs in-process, `Router.respond(to:)`).
    private unowned let server: HTTPServer?
    let connection: Connection?
    /// Set instead of a server when the router runs in-process.
    let inProcess: InProcessExchange?
    var rawRequest: RawRequest?
    /// The request as routed (parameters and route filled in); read on the loop thread.
    var request: Request
    var state: State = .pending
    /// Set by `conflateEventStream(keyedBy:)`: the stream conflates, keyed so.
    var conflationKeyOf: (([UInt8]) -> String?)?

    init(server: HTTPServer, connection: Connection, rawRequest: RawRequest, request: Request) {
        self.server = server
        self.connection = connection
        self.rawRequest = rawRequest
        self.request = request
        inProcess = nil
    }

    init(inProcess: InProcessExchange) {
        server = nil
        connection = nil
        request = inProcess.request
        self.inProcess = inProcess
    }

    /// Whether an answer was sent or the client went away. Read on the loop thread.
    public var isCompleted: Bool {
        if let inProcess { return inProcess.isCompleted }
        server?.loop.checkConfined("Responder.isCompleted")
        return state != .pending
    }

    /// Sends `response` (after the response filters). Only the first call counts.
    public func send(_ response: Response) {
        if let inProcess { return inProcess.answer(.response(response), request: request) }
        guard let server else { return }
        let loop = server.loop
        if loop.isOnLoopThread { answer(response, server) } else {
            loop.execute { [self] in
                guard let server = self.server else { return }
                answer(response, server)
            }
        }
    }

    /// Sends the problem answer for `error` (see `Response.error(_:)`).
    public func send(error: any Error) { send(.error(error)) }

    /// Turns this exchange into a Server-Sent-Events stream: the socket leaves evhttp for a
    /// stream worker, which writes the head (`Content-Type: text/event-stream`,
    /// `Cache-Control: no-cache`, `X-Accel-Buffering: no`, plus response-filter headers;
    /// chunked for HTTP/1.1, close-delimited for HTTP/1.0) and `retry: retryMilliseconds`.
    ///
    /// With `conflate` (or after `conflateEventStream(keyedBy:)`), a slow client is never cut
    /// off; while it is over the bound, a newer frame with the same conflation key replaces the
    /// queued older one.
    ///
    /// Returns nil when there is no stream to write to: the server is at `maxStreams` or
    /// shutting down (the client got 200, a jittered `retry:` and the end, as `EventSource`
    /// needs), the client is gone, or the request was already answered. Call on the loop thread.
    public func startEventStream(retryMilliseconds: Int? = nil, conflate: Bool = false) -> EventStream? {
        if let inProcess {
            return inProcess.startEventStream(retryMilliseconds: retryMilliseconds, conflate: conflate, request: request)
        }
        guard let server else { return nil }
        precondition(server.loop.isOnLoopThread, "startEventStream off the loop thread")
        return startEventStream(server, retryMilliseconds: retryMilliseconds, conflate: conflate || conflationKeyOf != nil)
    }

    /// Makes the stream this responder may start a conflating one, each frame sent with plain
    /// `send(_:)` keyed by `keyOf` (nil: never replaced). Lets a route ask for conflation
    /// before handing the responder to code that starts the stream. Call on the loop thread.
    public func conflateEventStream(keyedBy keyOf: @escaping ([UInt8]) -> String?) {
        if let inProcess { return inProcess.conflates = true }
        server?.loop.checkConfined("Responder.conflateEventStream")
        conflationKeyOf = keyOf
    }

    // MARK: The exchange (loop thread)

    private func answer(_ response: Response, _ server: HTTPServer) {
        guard state == .pending, let raw = rawRequest else { return }
        state = .answered
        rawRequest = nil
        connection?.current = nil
        var response = response
        server.applyResponseFilters(request, &response)
        server.write(response, to: raw, method: request.method)
        server.exchangeFinished()
    }

    private func startEventStream(_ server: HTTPServer, retryMilliseconds: Int?, conflate: Bool) -> EventStream? {
        guard state == .pending, let raw = rawRequest, let connection else { return nil }
        if request.method == .head {
            // Same head as a GET would get, no stream.
            answer(Response(status: .ok, headers: EventStream.headHeaders), server)
            return nil
        }
        if server.isDraining || !server.hasRoomForStream(client: request.clientAddress) {
            refuseStream(server)
            return nil
        }
        var head = Response(status: .ok, headers: EventStream.headHeaders)
        server.applyResponseFilters(request, &head)
        guard let stream = server.handOffStream(self, connection: connection, raw: raw, head: head,
                                                retryMilliseconds: server.jitteredRetry(around: retryMilliseconds),
                                                client: request.clientAddress,
                                                conflate: conflate, keyOf: conflationKeyOf) else {
            // The socket could not leave evhttp (out of descriptors): answer like a full server.
            refuseStream(server)
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
    private func refuseStream(_ server: HTTPServer) {
        if !server.isDraining { server.streamsShed += 1 }
        answer(server.streamRefusal(), server)
    }

    /// The hand-off's second step could not move the socket after all (out of descriptors):
    /// the refusal goes out through evhttp, which still holds the request, as on a full server.
    func refuseAfterHandOff(_ raw: RawRequest, _ server: HTTPServer) {
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
        if wasPending { server?.exchangeFinished() }
    }
}
