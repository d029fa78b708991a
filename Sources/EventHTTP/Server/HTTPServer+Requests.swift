import HTTPTypes

/// Requests a connection read, to the router: or the refusal the connection's standing calls
/// for (over its client's share, the server draining).
extension HTTPServer {
    func dispatch(_ request: Request, head: RequestHead, on connection: Connection) {
        if let refusal = connection.clientCapRefusal {
            writeClientCapRefusal(refusal, on: connection, head: head)
            return
        }
        if isDraining, connection.requestsRead == 1 {
            writeRefusal(FramingRefusal(status: .serviceUnavailable, detail: "The server is shutting down."),
                         on: connection, minorVersion: head.minorVersion, method: request.method)
            return
        }
        let exchange = ConnectionExchange(server: self, connection: connection, head: head)
        let responder = Responder(sink: exchange, request: request)
        connection.current = exchange
        inFlight += 1
        if let problem = HostField.problem(version: Int32(10 + head.minorVersion), headers: request.headers) {
            responder.send(.problem(status: .badRequest, detail: problem))
            return
        }
        guard request.hasWellFormedQuery else {
            responder.send(.problem(status: .badRequest, detail: "The query string has a broken percent-escape or is not UTF-8."))
            return
        }
        router.handle(request, responder)
    }
}
