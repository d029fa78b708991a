import Dispatch
import HTTPTypes

/// Decided at the head (API.md "Refused at the head"): when a head is complete and the body it
/// announces is still to come, the connection decides — before any of the body is read —
/// whether to read it at all: the route's own head checks (a credential, `Middleware.checkHead`),
/// and room in the body budget for this client (503). A refused head is answered at once and
/// the connection closes. (An over-limit `Content-Length` never gets this far: the framing
/// machine refuses it with 413.) A head whose body arrived with it is not decided here: the
/// router answers it.
extension Connection {
    /// What a head refused at the head is answered with.
    enum HeadRefusal {
        /// A refusal of the bytes themselves, or of the client: nothing of the request is trusted.
        case framing(FramingRefusal)
        /// An answer decided at the head (a route's credential check), to the request as routed,
        /// so the router's middleware finishes it as any other answer.
        case answer(Response, to: Request)
    }

    func decideHead(_ head: RequestHead) -> HeadRefusal? {
        // Over its client's share of connections: its first request is refused anyway, and its
        // body is not read for that.
        if requestsRead <= 1, let refusal = clientCapRefusal { return .framing(refusal) }
        var request = Request(method: head.method, target: head.target, headers: head.headers, body: [],
                              receivedAt: DispatchTime.now().uptimeNanoseconds)
        if let address {
            request.clientAddress = isTrustedProxy
                ? server.configuration.trustedProxies.client(peer: address, headers: head.headers) : address
        }
        if let (answer, routed) = server.router.answerAtHead(request) { return .answer(answer, to: routed) }
        // Room for the body, as far as it is known (a chunked body's length is not): what this
        // client and everyone hold now is what actually arrived, never what was announced.
        let client = request.clientAddress
        guard server.bodyBudget.hasRoom(for: machine.owedBody ?? 1, client: client) else {
            return .framing(FramingMachine.bodyBudgetRefusal)
        }
        machine.client = client
        return nil
    }

    /// The answer to a head refused at the head; then the connection closes.
    func answerAtHead(_ refusal: HeadRefusal) {
        let head = reading
        reading = nil
        discardBody()
        stopTimer()
        switch refusal {
        case .framing(let refusal):
            server.writeRefusal(refusal, on: self, minorVersion: head?.minorVersion ?? 1, method: head?.method ?? .get)
        case .answer(let response, let request):
            server.writeHeadAnswer(response, to: request, on: self, minorVersion: head?.minorVersion ?? 1)
        }
    }
}
