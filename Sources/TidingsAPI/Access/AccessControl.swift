import EventHTTP
import Foundation

/// Access control, stream tickets and CORS installed on the application's router.
///
/// The access check is a request filter: it runs after routing found the route (so unknown
/// paths and methods still answer 404/405 first, as the contract's order of checks says) and
/// before any handler. Its 401 answers go through the response filters like any other answer,
/// so they carry CORS headers and are counted by the metrics.
@MainActor
extension TidingsApplication {
    /// Installs the `--api-token`/`--read-token` rules, `POST /stream-tickets`, and (with
    /// `--cors-origin`) CORS. Call once, before serving.
    func installAccessControl() {
        let policy = AccessPolicy(apiTokens: configuration.apiTokens, readToken: configuration.readToken)
        let tickets = StreamTicketStore()
        if policy.isActive {
            router.addRequestFilter { request in
                switch policy.verdict(for: request) {
                case .allowed:
                    return nil
                case .needsTicket(let ticket):
                    return tickets.redeem(ticket) ? nil : Unauthorized.response(.invalidTicket)
                case .missingCredential:
                    return Unauthorized.response(.missing)
                case .invalidToken:
                    return Unauthorized.response(.invalidToken)
                }
            }
        }
        router.post(AccessPolicy.ticketRoute) { _, responder in
            // Tickets matter only while streams need a credential; an open server still
            // answers 201 (so a page works either way) without recording anything.
            let issued = policy.readsNeedCredential ? tickets.issue() : StreamTicketStore.unrecordedTicket()
            guard let ticket = issued else {
                responder.send(.problem(status: 503, title: "Service Unavailable",
                                        detail: "Too many stream tickets are outstanding; retry shortly.",
                                        headers: ["Retry-After": "5"]))
                return
            }
            responder.send(.json(TicketBody(ticket: ticket, expiresIn: tickets.expiresIn), status: 201,
                                 headers: ["Cache-Control": "no-store"]))
        }
        if let cors = CORSPolicy(origins: configuration.corsOrigins) {
            router.addResponseFilter { request, response in cors.apply(request, &response) }
        }
    }
}

/// `POST /stream-tickets` answer.
private struct TicketBody: Encodable {
    let ticket: String
    let expiresIn: Int
}

/// The 401 answers (RFC 6750 challenges; never echoing what was sent).
enum Unauthorized {
    enum Reason {
        case missing, invalidToken, invalidTicket
    }

    static let realm = #"Bearer realm="tidings""#

    static func response(_ reason: Reason) -> Response {
        switch reason {
        case .missing:
            return .problem(status: 401, title: "Unauthorized",
                            detail: "This request needs a bearer token: send 'Authorization: Bearer <token>'.",
                            headers: ["WWW-Authenticate": realm])
        case .invalidToken:
            return .problem(status: 401, title: "Unauthorized",
                            detail: "The bearer token is not valid for this request.",
                            headers: ["WWW-Authenticate": realm + #", error="invalid_token""#])
        case .invalidTicket:
            return .problem(status: 401, title: "Unauthorized",
                            detail: "The stream ticket is unknown, already used or expired; get a new one with POST /stream-tickets.",
                            headers: ["WWW-Authenticate": realm + #", error="invalid_token""#])
        }
    }
}
