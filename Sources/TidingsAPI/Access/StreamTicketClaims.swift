import EventHTTP
import HTTPTypes
import Foundation

/// Single use of a stream ticket across every instance sharing the store (API.md "Several
/// instances"): before a stream opens on a ticket, its nonce is claimed as the store's lease
/// `ticket:<nonce hex>` until the ticket expires (plus a margin for the clocks' skew), under a
/// holder name used for this one claim. The lease's upsert is one atomic statement on SQLite and
/// PostgreSQL, so of two instances redeeming one ticket at once exactly one gets it; the other
/// answers 401. A store that cannot be asked answers 503 with `Retry-After`: a stream never
/// opens on an unverified claim. The store purges expired lease rows as it takes new ones, so
/// claims do not pile up.
@MainActor
final class StreamTicketClaims {
    enum Outcome: Equatable {
        case claimed
        case alreadyUsed
        case unavailable
    }

    /// Seconds a claim outlives its ticket's expiry (instances' and the database's clocks differ).
    nonisolated static let margin: Double = 30

    /// Takes a lease in the shared store (``ChangeStore/acquireLease(_:holder:duration:)``),
    /// set once the resources opened it (nil: this instance's used-set alone decides).
    typealias TakeLease = @Sendable (_ name: String, _ holder: String, _ duration: Duration) async throws -> Bool
    var takeLease: TakeLease?
    private let now: () -> Double

    init(now: @escaping () -> Double = { Date().timeIntervalSince1970 }) {
        self.now = now
    }

    /// Claims `claim`'s nonce, then calls `then` on the loop with the outcome.
    func claim(_ claim: StreamTicket.Claim, then: @escaping @MainActor (Outcome) -> Void) {
        guard let takeLease else { return then(.claimed) }
        let seconds = max(1, Double(claim.expires) - now()) + Self.margin
        let holder = StreamTicket.Nonce.random().hex
        Task { @MainActor in
            let outcome: Outcome
            do {
                let granted = try await takeLease("ticket:" + claim.nonce.hex, holder, .milliseconds(Int64(seconds * 1_000)))
                outcome = granted ? .claimed : .alreadyUsed
            } catch {
                outcome = .unavailable
            }
            then(outcome)
        }
    }

    /// The 503 when the store cannot be asked.
    nonisolated static func unavailable() -> Response {
        .problem(status: .serviceUnavailable,
                 detail: "The stream ticket cannot be checked right now (the store is unreachable); retry shortly with a new ticket.",
                 headers: [.retryAfter: "1"])
    }
}

/// The event-stream routes: a request that came on a ticket (the access check verified it and
/// marked it used here) waits for its claim in the shared store before its handler runs; every
/// other request goes straight on. Handlers run on the loop, the main thread.
struct TicketClaimingRoutes: RouteRegistrar {
    let group: RouteGroup
    let credentials: Credentials
    let claims: StreamTicketClaims

    func on(_ method: HTTPRequest.Method, _ template: String, _ handler: @escaping RouteHandler) {
        let (credentials, claims) = (credentials, claims)
        let handler = LoopHandler(run: handler)
        group.on(method, template) { request, responder in
            guard case let .needsTicket(ticket) = credentials.policy.verdict(for: request, rule: .eventStream),
                  let parsed = StreamTicket.parse(ticket) else {
                return try handler.run(request, responder)
            }
            // The access check has verified this ticket (its handler runs only then).
            let claim = StreamTicket.Claim(nonce: parsed.ticket.nonce, expires: parsed.ticket.expires)
            MainActor.assumeIsolated {
                claims.claim(claim) { outcome in
                    switch outcome {
                    case .claimed:
                        do { try handler.run(request, responder) } catch { responder.send(.error(error)) }
                    case .alreadyUsed:
                        responder.send(Unauthorized.response(.invalidTicket))
                    case .unavailable:
                        responder.send(StreamTicketClaims.unavailable())
                    }
                }
            }
        }
    }
}

/// A route handler carried into the claim's continuation. `@unchecked Sendable`: it is only ever
/// called on the loop thread, where the router calls every handler.
private struct LoopHandler: @unchecked Sendable {
    let run: RouteHandler
}
