import EventHTTP
import HTTPTypes
import Observing
import TidingsStore

/// `?asOf=R` (a revision) or `?asOf=<RFC 3339 time>` on `GET /preferences`,
/// `GET /preferences/{key}` and `GET /things` (API.md "History"): the resource as it stood at
/// that revision, read from the store's history (the nearest checkpoint, then at most one
/// checkpoint interval of changes), every key as of the same revision. The answer carries
/// `Tidings-Revision: R` and the `ETag` of the last change at or before R.
@MainActor
struct AsOfReads {
    let state: TidingsState
    let store: any ChangeStore

    /// The point `asOf` names; 400 for anything that is neither a revision nor an RFC 3339 time.
    static func point(_ raw: String) throws(ProblemDetails) -> HistoryPoint {
        if (1...20).contains(raw.utf8.count), raw.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
            // Digits beyond any revision are still a revision: newer than the current one.
            return .revision(UInt64(raw) ?? UInt64.max)
        }
        if let time = RFC3339.microseconds(raw) { return .time(time) }
        throw Problems.badQuery("'asOf' must be a revision (digits) or an RFC 3339 time such as 2026-11-26T09:30:00Z.")
    }

    /// `GET /preferences?asOf=`: every declared key's value.
    func preferences(_ raw: String, responder: Responder) throws(ProblemDetails) {
        let point = try Self.point(raw)
        read(point, responder: responder) { past in
            var latest: UInt64 = 0
            let members = state.preferences.declarations.map { declaration -> String in
                let stored = past.preferences[declaration.key]
                latest = max(latest, stored?.revision ?? 0)
                return EventFrame.json(declaration.key) + ":" + EventFrame.json(value(stored, declaration))
            }
            return (Array(("{" + members.joined(separator: ",") + "}").utf8), latest)
        }
    }

    /// `GET /preferences/{key}?asOf=`: the key's record.
    func preference(_ key: String, raw: String, responder: Responder) throws(ProblemDetails) {
        let point = try Self.point(raw)
        guard let declaration = state.preferences.declaration(forKey: key) else { throw Problems.unknownPreference(key) }
        read(point, responder: responder) { past in
            let stored = past.preferences[key]
            let record = PreferenceRecord(key: key, value: value(stored, declaration), default: declaration.defaultValue,
                                          type: declaration.type, revision: stored?.revision ?? 0)
            return (Array(EventFrame.json(record).utf8), stored?.revision ?? 0)
        }
    }

    /// `GET /things?asOf=`: the list.
    func things(_ raw: String, responder: Responder) throws(ProblemDetails) {
        let point = try Self.point(raw)
        read(point, responder: responder) { past in
            (Array(EventFrame.json(ThingsList(things: past.things, revision: past.thingsRevision)).utf8), past.thingsRevision)
        }
    }

    /// A stored value as its declaration types it now (the default when reset, or when it no
    /// longer fits the declaration).
    private func value(_ stored: StoredPreference?, _ declaration: PreferenceDeclaration) -> PreferenceValue {
        stored?.json.flatMap { TidingsState.preferenceValue(json: $0, declaration: declaration) } ?? declaration.defaultValue
    }

    private func read(_ point: HistoryPoint, responder: Responder,
                      body: @escaping @MainActor (HistoricalState) -> (bytes: [UInt8], etag: UInt64)) {
        Task { @MainActor in
            let past: HistoricalState
            do {
                past = try await store.state(asOf: point, environment: state.environment)
            } catch {
                responder.send(HistoryProblems.forStore(error))
                return
            }
            let (bytes, etag) = body(past)
            responder.send(.json(bytes: bytes, headers: [
                .eTag: EntityTag(revision: etag).header,
                .tidingsRevision: String(past.revision),
                .cacheControl: "no-cache",
            ]))
        }
    }
}
