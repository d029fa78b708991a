import HTTPTypes
import Foundation

/// One request through the router: its route found, the middleware run (the router's, then its
/// group's), the handler called or the built-in answer sent (413, 404, 405, `OPTIONS`, 415), and each
/// answer's `finish` steps.
extension Router {
    /// Runs filters, routing, and the built-in answers for one request. `bodyLimitExceeded`
    /// (the limit, when the body is over it) is answered 413 before anything else, as a socket
    /// refuses such a request at its head.
    func handle(_ request: Request, _ responder: Responder, bodyLimitExceeded: Int? = nil) {
        var request = request
        if let limit = bodyLimitExceeded {
            // Refused as at the head (API.md "Refused at the head"), before anything else.
            responder.send(.problem(status: .contentTooLarge, detail: "The request body is larger than \(limit) bytes."))
            return
        }
        let found = match(request.method, path: request.path)
        switch found {
        case .handler(_, let routing, let chain), .options(_, let routing, let chain):
            request.routing = routing
            request.chain = chain
        case .methodNotAllowed(_, let routing):
            request.routing = routing
        case .notFound:
            break
        }
        responder.request = request
        switch found {
        case .handler, .options: if intercept(request, responder) { return }
        case .methodNotAllowed, .notFound: break
        }
        if case .handler = found, let problem = Self.unsupportedContentCoding(request) {
            responder.send(problem)
            return
        }
        switch found {
        case .handler(let handler, _, _):
            do {
                try handler(request, responder)
            } catch {
                if !responder.isCompleted { responder.send(.error(error)) }
            }
        case .options(let allow, _, _):
            responder.send(Response(status: .noContent, headers: [.allow: allow]))
        case .methodNotAllowed(let allow, _):
            responder.send(.problem(status: .methodNotAllowed, detail: "\(request.method.rawValue) is not allowed here; allowed: \(allow).",
                                    headers: [.allow: allow]))
        case .notFound:
            responder.send(.problem(status: .notFound, detail: "No resource at \(Self.printable(request.path))."))
        }
    }

    /// What a request whose body is still to come is answered at its head, with the request as
    /// routed (nil: read its body). Only requests that found a route: the router's, then the
    /// group's `Middleware.checkHead`, then a content coding the server does not decode.
    func answerAtHead(_ request: Request) -> (Response, Request)? {
        guard case .handler(_, let routing, let chain) = match(request.method, path: request.path) else { return nil }
        var request = request
        request.routing = routing
        request.chain = chain
        for index in middleware.indices {
            if let response = middleware[index].checkHead(request) { return (response, request) }
        }
        if chain != 0 {
            let list = chains[chain]
            for index in list.indices {
                if let response = list[index].checkHead(request) { return (response, request) }
            }
        }
        if let problem = Self.unsupportedContentCoding(request) { return (problem, request) }
        return nil
    }

    /// 415 for a request whose content is coded (`Content-Encoding` other than `identity`): the
    /// server decodes no request coding, so such a body is never read as if it were plain
    /// (RFC 9110 §15.5.16; the answer's `Accept-Encoding` says what would do).
    static func unsupportedContentCoding(_ request: Request) -> Response? {
        for field in request.headers where field.name == .contentEncoding {
            for coding in field.value.split(separator: ",") {
                let name = coding.trimmingCharacters(in: .whitespaces).lowercased()
                if name.isEmpty || name == "identity" { continue }
                return .problem(status: .unsupportedMediaType,
                                detail: "The request body is sent with Content-Encoding '\(name.prefix(64))'; this server reads only uncoded bodies (identity).",
                                headers: [.acceptEncoding: "identity"])
            }
        }
        return nil
    }

    /// Runs the router's, then the route group's middleware; true when one of them answered.
    private func intercept(_ request: Request, _ responder: Responder) -> Bool {
        // By index: `for step in` copies each existential out of the array first.
        for index in middleware.indices {
            if let response = middleware[index].intercept(request) {
                responder.send(response)
                return true
            }
        }
        guard request.chain != 0 else { return false }
        let chain = chains[request.chain]
        for index in chain.indices {
            if let response = chain[index].intercept(request) {
                responder.send(response)
                return true
            }
        }
        return false
    }

    /// Runs the `finish` step of the route group's, then the router's middleware on an answer
    /// about to be sent.
    func finish(_ request: Request, _ response: inout Response) {
        if request.chain != 0 {
            let chain = chains[request.chain]
            for index in chain.indices { chain[index].finish(request, &response) }
        }
        for index in middleware.indices { middleware[index].finish(request, &response) }
    }

    /// The path as text safe to echo in a problem's detail (bounded length).
    private static func printable(_ path: String) -> String {
        path.count > 200 ? String(path.prefix(200)) + "…" : path
    }
}
