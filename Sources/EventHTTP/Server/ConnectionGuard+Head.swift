internal import CLibevent
import Dispatch
import HTTPTypes

/// Decided at the head (API.md "Refused at the head"): when a head is complete and the body it
/// announces is still to come, the guard decides — before any of the body is read — whether to
/// read it at all: the route's own head checks (a credential, `Middleware.checkHead`), a request
/// content coding the server does not decode (415), and room in the body budget for this client
/// (503). A refused head never reaches evhttp; a stand-in carries its answer and the connection
/// closes. (An over-limit `Content-Length` never gets this far: the framing machine refuses it
/// with 413.) A head whose body arrived with it is not decided here: the router answers it.
extension ConnectionGuard {
    /// A clean head (`count` bytes at the front of `source`) whose body is still to come, or nil
    /// when it arrived whole.
    func decideHead(headBytes count: Int, in source: OpaquePointer) -> Refusal? {
        let received = evbuffer_get_length(source) - count
        if let owed = machine.owedBody, received >= owed { return nil }
        guard let front = evbuffer_pullup(source, count) else { return nil }
        // A clean head ends in CRLF CRLF; the parser takes it without its empty line.
        let bytes = [UInt8](UnsafeRawBufferPointer(start: front, count: count - 2))
        guard case .success(let parsed) = RequestFraming.parseHead(bytes[...], maxBodyBytes: machine.maxBodyBytes) else {
            return nil
        }
        return decide(parsed)
    }

    /// A head the machine re-serialised (`canonical`; empty for a chunked head, which the
    /// machine keeps) with `received` bytes after it so far.
    func decideHead(canonical: [UInt8], bodyReceived received: Int) -> Refusal? {
        if let owed = machine.owedBody, received >= owed { return nil }
        if let parsed = machine.chunkedHead { return decide(parsed) }
        guard canonical.count > 2,
              case .success(let parsed) = RequestFraming.parseHead(canonical[..<(canonical.count - 2)],
                                                                   maxBodyBytes: machine.maxBodyBytes) else { return nil }
        return decide(parsed)
    }

    private func decide(_ parsed: ParsedHead) -> Refusal? {
        guard let server else { return nil }
        // Over its client's share of connections: its first request is refused anyway, and its
        // body is not read for that.
        if machine.heads <= 1, let refusal = clientCapRefusal { return .framing(refusal) }
        var headers = HTTPFields()
        headers.reserveCapacity(parsed.fields.count)
        for field in parsed.fields {
            if let name = HTTPField.Name(field.name) { headers.append(HTTPField(name: name, value: field.value)) }
        }
        var request = Request(method: parsed.method, target: parsed.target, headers: headers, body: [],
                              receivedAt: DispatchTime.now().uptimeNanoseconds)
        if let address {
            request.clientAddress = isTrustedProxy
                ? server.configuration.trustedProxies.client(peer: address, headers: headers) : address
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
}
