import HTTPTypes
import EventHTTP

/// Who may do what (openapi.yaml "Access"), decided per request from the route's rule (the group
/// it was registered in, see `APIRoutes`), the method and the presented credential. Tokens are held
/// as bytes and only ever compared in constant time.
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
/// - `--tokens FILE` adds named credentials with a role (see ``TokensFile``); a request's actor
///   (``actor(for:)``) is the name of the credential it presents.
struct AccessPolicy {
    /// Credentials accepted for writes; empty = writes are open.
    let writeTokens: [NamedCredential]
    /// Credentials accepted for reads; empty = reads are open.
    let readTokens: [NamedCredential]
    /// Every credential, for naming who made a change.
    let all: [NamedCredential]
    /// Whether any credential is held as a digest (then a presented token is hashed once).
    private let usesDigests: Bool
    /// Whether any credential is limited to some environments (else no request's scope is looked up).
    let hasScopedCredentials: Bool

    /// How a route's requests are judged; routes anyone may call have no rule at all.
    enum Rule {
        /// Reads need a read credential, writes (`PUT`, `PATCH`, `POST`, `DELETE`) a write one.
        case byMethod
        /// As `byMethod`, and a `GET` without `Authorization` may present `?ticket=`.
        case eventStream
        /// A `POST` that only reads (it is authorised like a `GET`).
        case read
    }

    init(apiTokens: [String], readToken: String?, named: [NamedCredential] = []) {
        let api = apiTokens.filter { !$0.isEmpty }.map { NamedCredential(name: "api", role: .write, secret: .token(Array($0.utf8))) }
        let read = readToken.flatMap { $0.isEmpty ? nil : [NamedCredential(name: "read", role: .read, secret: .token(Array($0.utf8)))] } ?? []
        let writers = api + named.filter { $0.role == .write }
        let readers = read + named.filter { $0.role == .read }
        writeTokens = writers.isEmpty ? readers : writers
        readTokens = readers.isEmpty ? [] : readers + writers
        all = api + read + named
        usesDigests = named.contains { if case .sha256 = $0.secret { true } else { false } }
        hasScopedCredentials = named.contains { $0.environments != nil }
    }

    /// The environments the credential `request` presents may reach (nil: every one, also for
    /// a request presenting none, which the rules above judge). Every credential is compared.
    func environments(for request: Request) -> Set<String>? {
        guard hasScopedCredentials, case let .bearer(token) = PresentedCredential(request) else { return nil }
        let digest = usesDigests ? SHA256.hash(token) : nil
        var scope: Set<String>??
        for credential in all {
            let matched = credential.matches(token, digest: digest)
            if matched && scope == nil { scope = .some(credential.environments) }
        }
        return scope ?? nil
    }

    /// Whether `request`'s credential may reach `environment`.
    func mayReach(_ environment: String, request: Request) -> Bool {
        guard hasScopedCredentials else { return true }
        return environments(for: request).map { $0.contains(environment) } ?? true
    }

    /// The name of the credential `request` presents (`anonymous` when it presents none this
    /// server knows: an open server's writer). Every credential is compared, in constant time.
    func actor(for request: Request) -> String {
        guard case let .bearer(token) = PresentedCredential(request) else { return "anonymous" }
        let digest = usesDigests ? SHA256.hash(token) : nil
        var name: String?
        for credential in all {
            let matched = credential.matches(token, digest: digest)
            if matched && name == nil { name = credential.name }
        }
        return name ?? "anonymous"
    }

    /// The credential `request` presents (nil: none this server knows). Every credential is
    /// compared, in constant time.
    func credential(for request: Request) -> NamedCredential? {
        guard case let .bearer(token) = PresentedCredential(request) else { return nil }
        let digest = usesDigests ? SHA256.hash(token) : nil
        var found: NamedCredential?
        for credential in all {
            let matched = credential.matches(token, digest: digest)
            if matched && found == nil { found = credential }
        }
        return found
    }

    /// Whether `token` is one of `accepted`; every one is compared (no early exit).
    private func matchesAny(_ token: [UInt8], _ accepted: [NamedCredential]) -> Bool {
        let digest = usesDigests ? SHA256.hash(token) : nil
        var matched = false
        for credential in accepted {
            let equal = credential.matches(token, digest: digest)
            matched = matched || equal
        }
        return matched
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

    func requirement(for request: Request, rule: Rule) -> Requirement {
        switch request.method {
        case .post where rule == .read:
            return readTokens.isEmpty ? .none : .read
        case .put, .patch, .post, .delete:
            return writeTokens.isEmpty ? .none : .write
        case .options where request.headers.first(.accessControlRequestMethod) != nil:
            // A CORS preflight: browsers never attach credentials to it.
            return .none
        default:
            return readTokens.isEmpty ? .none : .read
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

    func verdict(for request: Request, rule: Rule) -> Verdict {
        let requirement = requirement(for: request, rule: rule)
        guard requirement != .none else { return .allowed }
        let accepted = requirement == .write ? writeTokens : readTokens
        switch PresentedCredential(request) {
        case .bearer(let token):
            return matchesAny(token, accepted) ? .allowed : .invalidToken
        case .unusable:
            return .invalidToken
        case .none:
            if requirement == .read, request.method == .get, rule == .eventStream,
               let ticket = request.query("ticket") {
                return .needsTicket(ticket)
            }
            return .missingCredential
        }
    }
}
