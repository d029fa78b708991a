import EventHTTP

/// Who may do what (openapi.yaml "Access"), decided per request from the route, the method and the
/// presented credential. Tokens are held as bytes and only ever compared in constant time.
///
/// - `--api-token T` (repeatable): `PUT`, `PATCH`, `POST`, `DELETE` need `Bearer T`.
/// - `--read-token R`: everything else except `/healthz`, `/readyz`, `/` and CORS preflights needs
///   `Bearer R` or `Bearer T`; event streams also take a single-use `?ticket=`.
/// - `POST /stream-tickets` grants reading only, so it is authorised like a read; so are the
///   OFREP evaluations (`POST /ofrep/v1/evaluate/flags[/{key}]`), reads that carry a context.
/// - OFREP's `X-API-Key: T` is taken like `Authorization: Bearer T` (see PresentedCredential).
/// - With only `--read-token`, writes need it too: a server that hides its data from anonymous
///   readers must not let them change it.
/// - When a request carries `Authorization`, that header alone decides; a ticket is consulted
///   only on an event stream without one. Credentials sent where none is needed are ignored.
struct AccessPolicy {
    /// Tokens accepted for writes; empty = writes are open.
    let writeTokens: [[UInt8]]
    /// Tokens accepted for reads; empty = reads are open.
    let readTokens: [[UInt8]]

    /// Routes anyone may read: the probes (orchestrators carry no credentials) and the dashboard
    /// page, static markup without data that a browser's navigation cannot attach a bearer
    /// header to; the page asks for the token itself when the API answers 401.
    static let openRoutes: Set<String> = ["/healthz", "/readyz", "/"]
    /// The event-stream routes, where `?ticket=` stands in for the header.
    static let eventStreamRoutes: Set<String> = [
        "/events", "/preferences/events", "/preferences/{key}/events", "/things/events", "/posts/events",
        OFREPRoutes.eventsPath,
    ]
    /// The route that trades a token for a stream ticket.
    static let ticketRoute = "/stream-tickets"

    init(apiTokens: [String], readToken: String?) {
        let api = apiTokens.filter { !$0.isEmpty }.map { Array($0.utf8) }
        let read = readToken.flatMap { $0.isEmpty ? nil : [Array($0.utf8)] } ?? []
        writeTokens = api.isEmpty ? read : api
        readTokens = read.isEmpty ? [] : read + api
    }

    /// Whether any rule is active (without tokens the filter is not installed at all).
    var isActive: Bool { !writeTokens.isEmpty || !readTokens.isEmpty }
    /// Whether reads (and so event streams) need a credential; only then are tickets recorded.
    var readsNeedCredential: Bool { !readTokens.isEmpty }

    /// What a request must present.
    enum Requirement: Equatable {
        case none
        case write
        case read
    }

    func requirement(for request: Request) -> Requirement {
        switch request.method {
        case .POST where request.route == Self.ticketRoute:
            return readTokens.isEmpty ? .none : .read
        case .POST where request.route.map(OFREPRoutes.evaluationRoutes.contains) == true:
            // OFREP evaluation is a read that OpenFeature sends as POST (it carries a context).
            return readTokens.isEmpty ? .none : .read
        case .PUT, .PATCH, .POST, .DELETE:
            return writeTokens.isEmpty ? .none : .write
        case .OPTIONS where request.headers["Access-Control-Request-Method"] != nil:
            // A CORS preflight: browsers never attach credentials to it.
            return .none
        default:
            if readTokens.isEmpty { return .none }
            if let route = request.route, Self.openRoutes.contains(route) { return .none }
            return .read
        }
    }

    /// The outcome of checking one request.
    enum Verdict: Equatable {
        case allowed
        /// Allowed by a stream ticket (which the caller must redeem to make it count).
        case needsTicket(String)
        /// No credential where one is needed.
        case missingCredential
        /// A token that is not valid for this request.
        case invalidToken
    }

    func verdict(for request: Request) -> Verdict {
        let requirement = requirement(for: request)
        guard requirement != .none else { return .allowed }
        let accepted = requirement == .write ? writeTokens : readTokens
        switch PresentedCredential(request) {
        case .bearer(let token):
            return ConstantTime.matchesAny(token, accepted) ? .allowed : .invalidToken
        case .unusable:
            return .invalidToken
        case .none:
            if requirement == .read, request.method == .GET,
               let route = request.route, Self.eventStreamRoutes.contains(route),
               let ticket = request.query("ticket") {
                return .needsTicket(ticket)
            }
            return .missingCredential
        }
    }
}
