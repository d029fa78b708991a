import HTTPTypes
import EventHTTP
import Foundation

/// The access check of one route group: middleware, so it runs after routing found the route
/// (unknown paths and methods still answer 404/405 first, as the contract's order of checks
/// says) and before the handler. Its 401 answers pass the router's middleware like any other
/// answer, so they carry CORS headers and are counted by the metrics.
struct AccessCheck: Middleware {
    let credentials: Credentials
    let rule: AccessPolicy.Rule
    let tickets: StreamTicketStore

    /// Routes that belong to no environment: a credential limited to some reaches them (the
    /// list of environments shows only those it reaches).
    static let environmentFree: Set<String> = ["/environments", "/metrics", "/openapi.yaml", "/sample/posts"]

    func intercept(_ request: Request) -> Response? {
        let policy = credentials.policy
        switch policy.verdict(for: request, rule: rule) {
        case .allowed:
            // API.md "Environments": a credential limited to some environments gets 403 on every
            // path of another — checked here, where every route (and its `{env}`) is resolved.
            guard policy.hasScopedCredentials, !Self.environmentFree.contains(request.route ?? "") else { return nil }
            let environment = request.environmentName
            return policy.mayReach(environment, request: request) ? nil : Self.forbidden(environment)
        case .needsTicket(let ticket):
            // Verified here, on any instance; single use across instances is the stream route's
            // claim in the shared store (TicketClaimingRoutes), before the stream opens.
            switch tickets.redeem(ticket, readers: policy.readTokens, environment: request.environmentName) {
            case .valid: return nil
            case .invalid: return Unauthorized.response(.invalidTicket)
            case .outOfScope: return Self.forbidden(request.environmentName)
            }
        case .missingCredential:
            return Unauthorized.response(.missing)
        case .invalidToken:
            return Unauthorized.response(.invalidToken)
        }
    }

    /// At the head of a request whose body is still to come: the same verdict, so a missing or
    /// wrong credential is a 401 before any of the body is read — but a ticket is not redeemed
    /// here (`intercept` does, on the whole request).
    func checkHead(_ request: Request) -> Response? {
        if case .needsTicket = credentials.policy.verdict(for: request, rule: rule) { return nil }
        return intercept(request)
    }
}

extension AccessCheck {
    static func forbidden(_ environment: String) -> Response {
        .problem(status: .forbidden, detail: "Your credential does not reach the environment \"\(String(environment.prefix(64)))\".")
    }
}

/// The route groups by access rule and `POST /stream-tickets`.
@MainActor
extension TidingsApplication {
    /// Makes the access-checked route groups (`--api-token`/`--read-token`) on `router` and
    /// registers `POST /stream-tickets`. Called once, by `init`.
    static func makeRoutes(configuration: TidingsConfiguration, credentials: Credentials, router: Router) -> APIRoutes {
        let tickets = StreamTicketStore()
        var routes = APIRoutes(router: router, credentials: credentials, tickets: tickets, claims: StreamTicketClaims(),
                               cors: CORSPolicy(origins: configuration.corsOrigins))
        let issue: RouteHandler = { request, responder in
            // Tickets matter only while streams need a credential; an open server still
            // answers 201 (so a page works either way) without recording anything.
            let ticket: String
            if credentials.policy.readsNeedCredential {
                // The access check let it through, so a bearer credential is the caller's; the
                // ticket is signed for it with the store's ticket secret (StreamTicket).
                guard let credential = credentials.policy.credential(for: request) else {
                    return responder.send(Unauthorized.response(.missing))
                }
                switch tickets.issue(for: credential, client: request.clientAddress) {
                case let .success(issued):
                    ticket = issued
                case let .failure(refusal):
                    let whose = switch refusal {
                    case let .client(limit): " by your address (at most \(limit))"
                    case let .credential(limit): " for your credential (at most \(limit))"
                    case .full: ""
                    }
                    responder.send(.problem(status: .serviceUnavailable,
                                            detail: "Too many stream tickets are outstanding\(whose); retry shortly.",
                                            headers: [.retryAfter: "5"]))
                    return
                }
            } else {
                ticket = StreamTicketStore.unrecordedTicket()
            }
            responder.send(.json(TicketBody(ticket: ticket, expiresIn: tickets.expiresIn), status: .created,
                                 headers: [.cacheControl: "no-store"]))
        }
        routes.readingPosts.post("/stream-tickets", issue)
        // Under an environment too, registered with the environments (TidingsResources).
        routes.issueTicket = issue
        return routes
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
            return .problem(status: .unauthorized,
                            detail: "This request needs a bearer token: send 'Authorization: Bearer <token>'.",
                            headers: [.wwwAuthenticate: realm])
        case .invalidToken:
            return .problem(status: .unauthorized,
                            detail: "The bearer token is not valid for this request.",
                            headers: [.wwwAuthenticate: realm + #", error="invalid_token""#])
        case .invalidTicket:
            return .problem(status: .unauthorized,
                            detail: "The stream ticket is unknown, already used or expired; get a new one with POST /stream-tickets.",
                            headers: [.wwwAuthenticate: realm + #", error="invalid_token""#])
        }
    }
}
