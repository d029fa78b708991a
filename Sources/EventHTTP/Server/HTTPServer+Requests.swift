internal import CLibevent
import HTTPTypes
import Foundation

/// The evhttp request reader: each request evhttp parsed (after the connection guard framed it)
/// becomes a `Request` for the router, or the answer to a refusal the guard recorded.
extension HTTPServer {
    func handle(_ raw: RawRequest) {
        guard let evcon = evhttp_request_get_connection(raw) else { return }
        // One lookup per request: the guard keeps the connection's record once it has one.
        let connectionGuard = evhttp_connection_get_bufferevent(evcon).flatMap { guards[$0] }
        switch connectionGuard?.nextRequest() {
        case .framing(let refusal):
            writeFramingRefusal(refusal, to: raw)
            return
        case .answer(let response, let request):
            writeHeadAnswer(response, to: request, raw: raw)
            return
        case nil:
            break
        }
        if let refusal = connectionGuard?.clientCapRefusal {
            writeClientCapRefusal(refusal, to: raw, headers: Self.headers(of: raw))
            return
        }
        let connection: Connection
        if let known = connectionGuard?.connection ?? connections[evcon] {
            connection = known
        } else {
            if isDraining {
                writeRefusal(raw)
                return
            }
            connection = Connection(evcon: evcon)
            connections[evcon] = connection
            connectionGuard?.connection = connection
            watchClose(evcon)
        }
        guard let method = HTTPRequest.Method(evhttp_request_get_command(raw)) else {
            write(Response.problem(status: .notImplemented, detail: "This method is not implemented."), to: raw, method: .get)
            return
        }
        var request = Request(method: method, target: Self.target(of: raw),
                              headers: Self.headers(of: raw), body: Self.body(of: raw),
                              receivedAt: DispatchTime.now().uptimeNanoseconds)
        if let connectionGuard, let peer = connectionGuard.address {
            request.clientAddress = connectionGuard.isTrustedProxy
                ? configuration.trustedProxies.client(peer: peer, headers: request.headers) : peer
        }
        let exchange = ConnectionExchange(server: self, connection: connection, rawRequest: raw)
        let responder = Responder(sink: exchange, request: request)
        connection.current = exchange
        inFlight += 1
        if let problem = HostField.problem(version: Self.version(of: raw), headers: request.headers) {
            responder.send(.problem(status: .badRequest, detail: problem))
            return
        }
        guard request.hasWellFormedQuery else {
            responder.send(.problem(status: .badRequest, detail: "The query string has a broken percent-escape or is not UTF-8."))
            return
        }
        // The router answers 413 after the route and the request filters (e.g. 401) had their say.
        let limit = configuration.maxBodySize
        router.handle(request, responder, bodyLimitExceeded: request.body.count > limit ? limit : nil)
    }

    /// 503 for a connection over the cap (or arriving while draining), then close.
    private func writeRefusal(_ raw: RawRequest) {
        var response = Response.problem(status: .serviceUnavailable, detail: isDraining ? "The server is shutting down." : "The server is at its connection limit; retry shortly.",
                                        headers: [.retryAfter: "2", .connection: "close"])
        response.headers[.connection] = "close"
        write(response, to: raw, method: .get)
    }

    /// The request's HTTP version, major * 10 + minor (10 or 11).
    static func version(of raw: RawRequest) -> Int32 {
        Int32(raw.pointee.major) * 10 + Int32(raw.pointee.minor)
    }

    private static func target(of raw: RawRequest) -> String {
        guard let uri = evhttp_request_get_uri(raw) else { return "/" }
        let target = String(cString: uri)
        if target.utf8.first == UInt8(ascii: "/") { return target }
        // Absolute form (`GET http://host/path`): keep path and query only.
        if let parsed = evhttp_request_get_evhttp_uri(raw) {
            var result = evhttp_uri_get_path(parsed).map { String(cString: $0) } ?? "/"
            if result.isEmpty { result = "/" }
            if let query = evhttp_uri_get_query(parsed) { result += "?" + String(cString: query) }
            return result
        }
        return target
    }

    private static func headers(of raw: RawRequest) -> HTTPFields {
        // `HTTPFields()`, not `[:]`: the dictionary-literal initializer is not inlined.
        var headers = HTTPFields()
        guard let list = evhttp_request_get_input_headers(raw) else { return headers }
        // One allocation for the fields instead of growing by doubling (a single field gets
        // exactly one from its append anyway).
        var count = 0
        var counted = list.pointee.tqh_first
        while let current = counted { count += 1; counted = current.pointee.next.tqe_next }
        if count > 1 { headers.reserveCapacity(count) }
        var entry = list.pointee.tqh_first
        while let current = entry {
            // The connection guard let only token names through; a name that is not one is dropped.
            if let key = current.pointee.key, let value = current.pointee.value,
               let name = KnownFieldNames.name(key) {
                headers.append(HTTPField(name: name, value: String(cString: value)))
            }
            entry = current.pointee.next.tqe_next
        }
        return headers
    }

    private static func body(of raw: RawRequest) -> [UInt8] {
        guard let buffer = evhttp_request_get_input_buffer(raw) else { return [] }
        let length = evbuffer_get_length(buffer)
        guard length > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: length) { storage, count in
            count = max(0, Int(evbuffer_copyout(buffer, storage.baseAddress, length)))
        }
    }
}
