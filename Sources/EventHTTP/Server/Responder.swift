internal import CLibevent

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
public final class Responder: @unchecked Sendable {
    let exchange: Exchange!
    /// Set instead of `exchange` when the router runs in-process (`Router.respond(to:)`).
    let inProcess: InProcessExchange?
    /// The request as routed (parameters and route filled in); read on the loop thread.
    var request: Request {
        get { inProcess?.request ?? exchange.request }
        set { if let inProcess { inProcess.request = newValue } else { exchange.request = newValue } }
    }

    init(exchange: Exchange) { self.exchange = exchange; inProcess = nil }
    init(inProcess: InProcessExchange) { exchange = nil; self.inProcess = inProcess }

    /// Whether an answer was sent or the client went away. Read on the loop thread.
    public var isCompleted: Bool {
        if let inProcess { return inProcess.isCompleted }
        exchange.server.loop.checkConfined("Responder.isCompleted")
        return exchange.state != .pending
    }

    /// Sends `response` (after the response filters). Only the first call counts.
    public func send(_ response: Response) {
        if let inProcess { return inProcess.answer(.response(response)) }
        let loop = exchange.server.loop
        if loop.isOnLoopThread { exchange.send(response) } else {
            loop.execute { [self] in exchange.send(response) }
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
    public func startEventStream(retryMilliseconds: Int = 3_000, conflate: Bool = false) -> EventStream? {
        if let inProcess {
            inProcess.answer(.eventStream(retryMilliseconds: retryMilliseconds, conflate: conflate || inProcess.conflates))
            return nil
        }
        precondition(exchange.server.loop.isOnLoopThread, "startEventStream off the loop thread")
        return exchange.startEventStream(retryMilliseconds: retryMilliseconds,
                                         conflate: conflate || exchange.conflationKeyOf != nil)
    }

    /// Makes the stream this responder may start a conflating one, each frame sent with plain
    /// `send(_:)` keyed by `keyOf` (nil: never replaced). Lets a route ask for conflation
    /// before handing the responder to code that starts the stream. Call on the loop thread.
    public func conflateEventStream(keyedBy keyOf: @escaping ([UInt8]) -> String?) {
        if let inProcess { return inProcess.conflates = true }
        exchange.server.loop.checkConfined("Responder.conflateEventStream")
        exchange.conflationKeyOf = keyOf
    }
}
