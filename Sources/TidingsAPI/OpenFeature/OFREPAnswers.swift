import HTTPTypes
import EventHTTP
import Observing

/// OFREP's evaluation answers as bytes, each built once per revision of what it shows and then
/// served as it is: an evaluation's answer does not depend on its context (preferences are
/// settings, not targeted flags), only on the values, so evaluating costs what a cached `GET`
/// costs. Held by the ``TidingsState`` it shows (one per state, so each state — each environment —
/// has its own), confined to the loop like it.
///
/// Correctness rests on the keys: a flag's answer is keyed by its preference's revision, the bulk
/// answer by the latest preference revision; every change gives the key it touches a new revision
/// before the next request is read (``TidingsState/apply(_:)``), on every instance alike (each
/// applies every change), and a reload from a snapshot drops everything (``invalidate()``).
@MainActor
final class OFREPAnswers {
    /// An answer and the revision it shows.
    private struct Answer {
        let revision: UInt64
        let response: Response
    }

    /// A flag's answer, the revision it shows, and the latest preference revision at which that
    /// was last confirmed: while no preference changed since, it is current without looking up
    /// its own revision (a second hash of the key).
    private struct FlagAnswer {
        let revision: UInt64
        var confirmedAt: UInt64
        let response: Response
    }

    private var flags: [String: FlagAnswer] = [:]
    private var bulk: Answer?

    /// `POST /ofrep/v1/evaluate/flags/{key}`'s answer for a declared key as it is now; nil for
    /// an undeclared one. One hash of the key while nothing changed: an answer is kept only for
    /// a declared key (declarations never change), and it is current while the latest preference
    /// revision is the one it was confirmed at (any change of any preference moves that on, so
    /// the key's own revision is looked at again then; a reload drops everything).
    func flag(_ key: String, state: TidingsState) -> Response? {
        let latest = state.latestPreferenceRevision
        if let cached = flags[key] {
            if cached.confirmedAt == latest { return cached.response }
            if cached.revision == state.revision(ofPreference: key) {
                flags[key]?.confirmedAt = latest
                return cached.response
            }
        }
        let revision = state.revision(ofPreference: key)
        guard let success = OFREPEvaluation.success(key, state: state) else { return nil }
        let response = Response.json(bytes: Array(success.utf8), headers: [.cacheControl: "no-store"])
        flags[key] = FlagAnswer(revision: revision, confirmedAt: latest, response: response)
        return response
    }

    /// `POST /ofrep/v1/evaluate/flags`'s answer as it is now, with its ETag (the latest preference
    /// revision; `If-None-Match` is the caching middleware's).
    func bulk(state: TidingsState, eventsPath: String) -> Response {
        let latest = state.latestPreferenceRevision
        if let bulk, bulk.revision == latest { return bulk.response }
        let response = Response.json(bytes: Self.encodeBulk(state: state, eventsPath: eventsPath),
                                     headers: [.eTag: EntityTag(revision: latest).header, .cacheControl: "no-cache"])
        bulk = Answer(revision: latest, response: response)
        return response
    }

    /// Forgets every answer (memory was rebuilt from a snapshot: revisions may repeat).
    func invalidate() {
        flags = [:]
        bulk = nil
    }

    /// `{"flags": [every preference, in declaration order], "eventStreams": [...]}`.
    private static func encodeBulk(state: TidingsState, eventsPath: String) -> [UInt8] {
        let flags = state.preferences.declarations.compactMap { OFREPEvaluation.success($0.key, state: state) }
        var endpoint = JSONObjectWriter()
        endpoint.string("requestUri", eventsPath)
        var stream = JSONObjectWriter()
        stream.string("type", "sse")
        stream.raw("endpoint", endpoint.json)
        stream.raw("inactivityDelaySec", "120")
        var body = JSONObjectWriter()
        body.raw("flags", "[" + flags.joined(separator: ",") + "]")
        body.raw("eventStreams", "[" + stream.json + "]")
        return body.bytes
    }
}
