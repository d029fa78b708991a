import EventHTTP

/// Where the API's routes are registered, by who may call them (API.md "Access"): each route
/// declares its access rule by the group it joins, so no list of routes is kept elsewhere.
struct APIRoutes {
    /// Anyone: the probes (orchestrators carry no credentials) and the dashboard page, static
    /// markup a browser's navigation cannot attach a bearer header to.
    let open: RouteGroup
    /// The resources: reads need the read token (when set), writes the write token.
    let resources: RouteGroup
    /// Event streams: as `resources`, and a single-use `?ticket=` stands in for the header
    /// (claimed in the shared store before the stream opens, see ``TicketClaimingRoutes``).
    let streams: TicketClaimingRoutes
    /// POSTs that only read (stream tickets, OFREP evaluations, which carry a context): they
    /// are authorised as reads.
    let readingPosts: RouteGroup
    /// Stream tickets issued and redeemed here (their key is set once the store is open).
    let tickets: StreamTicketStore
    /// `POST /stream-tickets`' handler, which the environments' resources also register under
    /// `/environments/{env}` (once they know which environments exist).
    var issueTicket: RouteHandler = { _, _ in }

    /// The groups on `router`, checked by `credentials` (no check at all when it has no tokens
    /// and no `--tokens` file; then the resources refuse writes from other sites' pages, see
    /// ``CrossSiteWrites``).
    init(router: Router, credentials: Credentials, tickets: StreamTicketStore, claims: StreamTicketClaims, cors: CORSPolicy?) {
        open = router.group()
        self.tickets = tickets
        // A server that may gain credentials on reload (`--tokens`) always checks.
        let active = credentials.policy.isActive || credentials.tokensFile != nil
        func checked(_ rule: AccessPolicy.Rule) -> RouteGroup {
            active ? router.group(AccessCheck(credentials: credentials, rule: rule, tickets: tickets)) : router.group()
        }
        if active {
            // A `--tokens` file that names no writer yet leaves writes open until a reload: then
            // other sites' pages are refused as on a token-less server.
            resources = credentials.policy.isActive
                ? checked(.byMethod)
                : router.group(AccessCheck(credentials: credentials, rule: .byMethod, tickets: tickets), CrossSiteWrites(cors: cors))
        } else {
            resources = router.group(CrossSiteWrites(cors: cors))
        }
        streams = TicketClaimingRoutes(group: checked(.eventStream), credentials: credentials, claims: claims)
        readingPosts = checked(.read)
    }
}
