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
/// The responder is the same whatever carries the answer: it writes to a `ResponseSink` — the
/// connection's exchange (`ConnectionExchange`) on a socket, the recorder (`InProcessExchange`)
/// when the router runs in-process — so tests run the production responder, with no branch
/// for them in it.
///
/// `@unchecked Sendable`: `request` and `conflationKeyOf` are read and written on the loop
/// thread only (`send` hops there through its sink from any other thread), and the sink checks
/// its own confinement.
public final class Responder: @unchecked Sendable {
    let sink: any ResponseSink
    /// The request as routed (parameters and route filled in); read on the loop thread.
    var request: Request
    /// Set by `conflateEventStream(keyedBy:)`: the stream conflates, keyed so.
    var conflationKeyOf: (([UInt8]) -> String?)?

    init(sink: any ResponseSink, request: Request) {
        self.sink = sink
        self.request = request
    }

    /// Whether an answer was sent or the client went away. Read on the loop thread.
    public var isCompleted: Bool { sink.isCompleted }

    /// Sends `response` (after the response filters). Only the first call counts.
    public func send(_ response: Response) {
        sink.onLoop { [self] in sink.answer(response, to: request) }
    }

    /// Sends the problem answer for `error` (see `Response.error(_:)`).
    public func send(error: any Error) { send(.error(error)) }

    /// Turns this exchange into a Server-Sent-Events stream: the connection's socket goes to a
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
        sink.startEventStream(for: request, retryMilliseconds: retryMilliseconds,
                              conflate: conflate || conflationKeyOf != nil, keyOf: conflationKeyOf)
    }

    /// Makes the stream this responder may start a conflating one, each frame sent with plain
    /// `send(_:)` keyed by `keyOf` (nil: never replaced). Lets a route ask for conflation
    /// before handing the responder to code that starts the stream. Call on the loop thread.
    public func conflateEventStream(keyedBy keyOf: @escaping ([UInt8]) -> String?) {
        sink.checkConfined("Responder.conflateEventStream")
        conflationKeyOf = keyOf
    }
}

/// Where a responder's answer goes: one small seam with two implementations, the connection
/// the request came on (`ConnectionExchange`) and the in-process recorder (`InProcessExchange`).
/// Loop-thread confined (the in-process router's loop is the main thread), except `onLoop`.
protocol ResponseSink: AnyObject {
    /// Runs `body` on the sink's loop thread: now when called there, else as soon as it can.
    func onLoop(_ body: @escaping @Sendable () -> Void)
    /// Precondition (debug builds): called on the sink's loop thread.
    func checkConfined(_ what: String)
    /// Whether an answer was sent (or a stream started), or the client went away.
    var isCompleted: Bool { get }
    /// The answer to `request` as routed, through the response filters; only the first counts.
    func answer(_ response: Response, to request: Request)
    /// Turns the exchange into an event stream (`Responder.startEventStream`); nil when there
    /// is none to write to (the client got the refusal, or went away, or was answered).
    func startEventStream(for request: Request, retryMilliseconds: Int?, conflate: Bool,
                          keyOf: (([UInt8]) -> String?)?) -> EventStream?
}
