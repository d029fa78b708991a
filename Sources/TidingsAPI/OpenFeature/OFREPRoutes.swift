import EventHTTP
import Observing

/// OpenFeature's Remote Evaluation Protocol (OFREP 0.3.0) over the declared preferences (API.md
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
    /// What the routes below are, for the access policy (reads although POST).
    nonisolated static let evaluationRoutes: Set<String> = ["/ofrep/v1/evaluate/flags", "/ofrep/v1/evaluate/flags/{key}"]

    /// Registers the routes and hands the hub the OFREP frame encoding.
    static func register(state: TidingsState, hub: StreamHub, on router: Router) {
        hub.ofrep = OFREPNotifications(state: state)
        OFREPRoutes(state: state, hub: hub).register(on: router)
    }

    func register(on router: Router) {
        router.post("/ofrep/v1/evaluate/flags/{key}") { request, responder in
            let key = request.parameters["key"] ?? ""
            guard let success = OFREPEvaluation.success(key, state: state) else {
                responder.send(OFREPEvaluation.flagNotFound(key))
                return
            }
            if let problem = try OFREPRequest.problem(request) {
                responder.send(OFREPEvaluation.parseError(problem, key: key))
                return
            }
            responder.send(.json(bytes: Array(success.utf8), headers: ["Cache-Control": "no-store"]))
        }
        router.post("/ofrep/v1/evaluate/flags") { request, responder in
            if let problem = try OFREPRequest.problem(request) {
                responder.send(OFREPEvaluation.parseError(problem, key: nil))
                return
            }
            let latest = OFREPEvaluation.latestPreferenceRevision(state)
            let etag = "\"\(latest)\""
            if let tags = request.entityTags("If-None-Match"), tags.contains("*") || tags.contains(String(latest)) {
                responder.send(Response(status: 304, headers: ["ETag": etag]))
                return
            }
            responder.send(.json(bytes: bulkBody(), headers: ["ETag": etag, "Cache-Control": "no-cache"]))
        }
        router.get(Self.eventsPath) { request, responder in
            let keys = state.preferences.declarations.map(\.key)
            try hub.open(request, responder: responder, coverage: StreamCoverage(preferenceKeys: keys, ofrep: true))
        }
    }

    /// `{"flags": [every preference, in declaration order], "eventStreams": [...]}`.
    private func bulkBody() -> [UInt8] {
        let flags = state.preferences.declarations.compactMap { OFREPEvaluation.success($0.key, state: state) }
        var endpoint = OFREPJSON()
        endpoint.string("requestUri", Self.eventsPath)
        var stream = OFREPJSON()
        stream.string("type", "sse")
        stream.raw("endpoint", endpoint.json)
        stream.raw("inactivityDelaySec", "120")
        var body = OFREPJSON()
        body.raw("flags", "[" + flags.joined(separator: ",") + "]")
        body.raw("eventStreams", "[" + stream.json + "]")
        return body.bytes
    }
}
