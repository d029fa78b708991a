import HTTPTypes
import EventHTTP
import Observing
import TidingsStore

/// OpenFeature's Remote Evaluation Protocol (OFREP 0.3.0) over the declared preferences (openapi.yaml
/// "OpenFeature"): single and bulk evaluation, the bulk ETag, and the change-notification stream.
///
/// Credentials are the API's (`Authorization: Bearer` or OFREP's `X-API-Key`, see Access/), and
/// both evaluations count as reads although they are POSTs.
@MainActor
struct OFREPRoutes {
    let state: TidingsState
    let hub: StreamHub

    /// The path of the notification stream, as `eventStreams` announces it.
    nonisolated static let eventsPath = "/ofrep/v1/events"

    /// Registers the routes and hands the hub the OFREP frame encoding.
    static func register(state: TidingsState, hub: StreamHub, on routes: any RouteGroups) {
        hub.ofrep = OFREPNotifications(state: state)
        OFREPRoutes(state: state, hub: hub).register(on: routes)
    }

    private init(state: TidingsState, hub: StreamHub) {
        self.state = state
        self.hub = hub
    }

    /// The evaluations are reads although POSTs; the notifications an event stream.
    func register(on routes: any RouteGroups) {
        routes.readingPostRoutes.post("/ofrep/v1/evaluate/flags/{key}") { request, responder in
            let key = request.parameter("key") ?? ""   // found by name, not hashed
            // The answer as it is now; nil: no such flag (answered before the body is looked at).
            guard let answer = state.ofrepAnswers.flag(key, state: state) else {
                responder.send(OFREPEvaluation.flagNotFound(key))
                return
            }
            switch try OFREPRequest.verdictAtOnce(request) {
            case .evaluation?:
                responder.send(answer)
            case let .notEvaluation(problem)?:
                responder.send(OFREPEvaluation.parseError(problem, key: key))
            case nil:
                OFREPRequest.fullReading(request, responder) { problem in
                    if let problem { return responder.send(OFREPEvaluation.parseError(problem, key: key)) }
                    // The value as it is now (a large body was checked off the loop meanwhile).
                    guard let answer = state.ofrepAnswers.flag(key, state: state) else {
                        return responder.send(OFREPEvaluation.flagNotFound(key))
                    }
                    responder.send(answer)
                }
            }
        }
        routes.readingPostRoutes.post("/ofrep/v1/evaluate/flags") { request, responder in
            if let problem = OFREPQuery.problem(request) {
                responder.send(OFREPEvaluation.parseError(problem, key: nil))
                return
            }
            try OFREPRequest.check(request, responder) { problem in
                if let problem { return responder.send(OFREPEvaluation.parseError(problem, key: nil)) }
                // `If-None-Match` → 304 is the caching middleware's (this route is one of its
                // conditional POSTs), so the gzip representation's tag matches too.
                // Each environment's own stream (a provider given `.../environments/staging` follows it).
                let prefix = state.environment == EnvironmentName.default ? "" : "/environments/" + state.environment
                responder.send(state.ofrepAnswers.bulk(state: state, eventsPath: prefix + Self.eventsPath))
            }
        }
        routes.streamRoutes.get(Self.eventsPath) { request, responder in
            let keys = state.preferences.declarations.map(\.key)
            try hub.open(request, responder: responder, coverage: StreamCoverage(preferenceKeys: keys, ofrep: true))
        }
    }
}
