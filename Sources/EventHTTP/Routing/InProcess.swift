import Dispatch
import HTTPTypes

/// What a route answered when the router runs in-process (`Router.respond(to:)`).
public enum InProcessAnswer: Sendable {
    /// An answer, after the route's and the router's middleware (as it would be written).
    case response(Response)
    /// The route turned the request into an event stream: its head and every frame the route
    /// writes from now on are recorded there (see `InProcessStream`).
    case eventStream(InProcessStream)

    /// The response, or nil for an event stream.
    public var response: Response? {
        if case .response(let response) = self { return response }
        return nil
    }
}

/// The exchange of one in-process request, the `ResponseSink` the responder writes to when the
/// router runs in-process: records the first answer. Loop-thread (main-thread) confined like
/// the router: every member checks it (a main-queue precondition).
final class InProcessExchange: ResponseSink {
    let router: Router
    /// The request as it arrived (the responder keeps it as routed).
    let request: Request
    private(set) var isCompleted = false
    private var continuation: CheckedContinuation<InProcessAnswer, Never>?

    init(router: Router, request: Request, continuation: CheckedContinuation<InProcessAnswer, Never>) {
        self.router = router
        self.request = request
        self.continuation = continuation
    }

    /// In-process handlers answer on the main thread (directly or through the main actor); an
    /// answer from elsewhere would race the router's state, and `answer` says so.
    func onLoop(_ body: @escaping @Sendable () -> Void) { body() }

    func checkConfined(_ what: String) { dispatchPrecondition(condition: .onQueue(.main)) }

    func answer(_ response: Response, to request: Request) { answer(.response(response), request: request) }

    /// Records the first answer; `request` is the request as routed (the middleware sees it so).
    func answer(_ answer: InProcessAnswer, request: Request) {
        // In-process handlers answer on the calling thread or through the main actor; an answer
        // from elsewhere would race the router's state.
        dispatchPrecondition(condition: .onQueue(.main))
        guard !isCompleted else { return }
        isCompleted = true
        var answer = answer
        if case .response(var response) = answer {
            router.finish(request, &response)
            response.headers = response.allHeaders
            response.addedFields = []
            answer = .response(response)
        }
        continuation?.resume(returning: answer)
        continuation = nil
    }

    /// The route starts an event stream: answered with the stream's head (after the
    /// middleware, as a socket would get it), its body recorded from the `retry:` line on.
    /// A HEAD gets the head and no stream, as over a socket.
    func startEventStream(for routed: Request, retryMilliseconds: Int?, conflate: Bool,
                          keyOf: (([UInt8]) -> String?)?) -> EventStream? {
        dispatchPrecondition(condition: .onQueue(.main))
        guard !isCompleted else { return nil }
        var head = Response(status: .ok, headers: EventStream.headHeaders)
        if routed.method == .head {
            answer(.response(head), request: routed)
            return nil
        }
        router.finish(routed, &head)
        head.headers = head.allHeaders
        head.addedFields = []
        let server = router.owner
        let retryMilliseconds = server?.jitteredRetry(around: retryMilliseconds) ?? retryMilliseconds ?? 3_000
        let recorder = InProcessStream(head: head, retryMilliseconds: retryMilliseconds,
                                       conflates: conflate, router: router)
        let stream = EventStream(id: -1, workerIndex: -1, sink: recorder, server: server, keyOf: nil)
        recorder.stream = stream
        router.inProcessStreams.open[ObjectIdentifier(recorder)] = recorder
        if let server, !router.inProcessStreams.isRegistered {
            router.inProcessStreams.isRegistered = true
            server.fanOuts.append(router.inProcessStreams)
        }
        if let padding = server?.configuration.streamPadding, padding > 0 {
            recorder.append(ServerSentEvent.padding(bytes: padding))
        }
        recorder.append(ServerSentEvent.retry(milliseconds: retryMilliseconds))
        isCompleted = true
        continuation?.resume(returning: .eventStream(recorder))
        continuation = nil
        return stream
    }
}

extension Router {
    /// Runs `request` through routing, middleware and the route's handler in-process — no
    /// socket, no server — and returns its answer once the route gave one (now or after
    /// asynchronous work on the main actor). For tests of the routes built on this router, as
    /// Hummingbird's testing library runs a router without a server. Call on the main thread.
    ///
    /// ```swift
    /// let answer = await router.respond(to: Request(method: .get, target: "/healthz"))
    /// XCTAssertEqual(answer.response?.status, .ok)
    /// ```
    @MainActor
    public func respond(to request: Request, bodyLimit: Int = .max) async -> InProcessAnswer {
        await withCheckedContinuation { continuation in
            let exchange = InProcessExchange(router: self, request: request, continuation: continuation)
            let responder = Responder(sink: exchange, request: request)
            guard request.hasWellFormedQuery else {
                return responder.send(.problem(status: .badRequest, detail: "The query string has a broken percent-escape or is not UTF-8."))
            }
            handle(request, responder, bodyLimitExceeded: request.body.count > bodyLimit ? bodyLimit : nil)
        }
    }
}
