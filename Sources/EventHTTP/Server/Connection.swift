internal import CLibevent
import HTTPTypes

/// evhttp's request (a complete C struct through http_struct.h).
typealias RawRequest = UnsafeMutablePointer<evhttp_request>

/// What the server knows about one client connection (`evhttp_connection`). Loop-thread
/// confined. evhttp handles one request at a time per connection, so there is at most one
/// current exchange.
final class Connection {
    let evcon: OpaquePointer
    var current: Exchange?

    init(evcon: OpaquePointer) { self.evcon = evcon }

    var bufferevent: OpaquePointer? { evhttp_connection_get_bufferevent(evcon) }

    /// Bytes waiting in the server's output buffer for this connection.
    var bufferedOutput: Int {
        guard let bev = bufferevent, let output = bufferevent_get_output(bev) else { return 0 }
        return evbuffer_get_length(output)
    }
}

/// One request and its answer. Loop-thread confined; owns the `evhttp_request` until the
/// answer is handed to evhttp, or frees it when evhttp detached it from a vanished client.
final class Exchange {
    enum State { case pending, answered, streaming, gone }

    unowned let server: HTTPServer
    let connection: Connection
    var rawRequest: RawRequest?
    var request: Request
    var state: State = .pending
    /// Set by `Responder.conflateEventStream(keyedBy:)`: the stream conflates, keyed so.
    var conflationKeyOf: (([UInt8]) -> String?)?

    init(server: HTTPServer, connection: Connection, rawRequest: RawRequest, request: Request) {
        self.server = server
        self.connection = connection
        self.rawRequest = rawRequest
        self.request = request
    }

    func send(_ response: Response) {
        guard state == .pending, let raw = rawRequest else { return }
        state = .answered
        rawRequest = nil
        connection.current = nil
        var response = response
        let server = server   // one strong load of the unowned reference, not three
        server.applyResponseFilters(request, &response)
        server.write(response, to: raw, method: request.method)
        server.exchangeFinished()
    }

    func startEventStream(retryMilliseconds: Int, conflate: Bool) -> EventStream? {
        guard state == .pending, let raw = rawRequest else { return nil }
        if request.method == .head {
            // Same head as a GET would get, no stream.
            send(Response(status: .ok, headers: EventStream.headHeaders))
            return nil
        }
        if server.isDraining || server.openStreamCount >= server.streamLimit {
            refuseStream()
            return nil
        }
        var head = Response(status: .ok, headers: EventStream.headHeaders)
        server.applyResponseFilters(request, &head)
        guard let stream = server.handOffStream(self, raw: raw, head: head, retryMilliseconds: retryMilliseconds,
                                                conflate: conflate, keyOf: conflationKeyOf) else {
            // The socket could not leave evhttp (out of descriptors): answer like a full server.
            refuseStream()
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
    private func refuseStream() {
        let range = server.configuration.fullRetryMilliseconds
        var head = Response(status: .ok, headers: EventStream.headHeaders)
        head.headers[.connection] = "close"
        head.body = ServerSentEvent.retry(milliseconds: Int.random(in: range))
        send(head)
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
