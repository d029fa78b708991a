import HTTPTypes
import EventHTTP
import Observing

/// `GET /preferences/{key}` and the write answers: the key's record.
struct PreferenceRecord: Encodable {
    let key: String
    let value: PreferenceValue
    let `default`: PreferenceValue
    let type: PreferenceType
    let revision: UInt64
}

/// `PUT /preferences/{key}` body. `value` is optional here so a missing one is a 422 that
/// says so, rather than a decoding error.
private struct ValueBody: Decodable {
    let value: PreferenceInput?
    let hasValue: Bool

    private enum CodingKeys: String, CodingKey { case value }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        hasValue = container.contains(.value)
        if hasValue, try !container.decodeNil(forKey: .value) {
            value = try container.decode(PreferenceInput.self, forKey: .value)
        } else {
            value = nil
        }
    }
}

/// The Preferences resource of openapi.yaml: the declared settings, read from memory, written through
/// the durable write pipeline.
@MainActor
struct PreferenceRoutes {
    let state: TidingsState
    let writes: WritePipeline
    /// `?asOf=` (History/AsOfReads).
    let asOf: AsOfReads?
    private let cache = EncodedRecords()

    init(state: TidingsState, writes: WritePipeline, asOf: AsOfReads? = nil) {
        self.state = state
        self.writes = writes
        self.asOf = asOf
    }

    func register(on router: any RouteRegistrar) {
        router.get("/preferences") { request, responder in
            if let asOf, let point = request.query("asOf") { return try asOf.preferences(point, responder: responder) }
            responder.send(mapResponse())
        }
        router.patch("/preferences") { request, responder in
            // Refused before any per-key work: a body can name far more keys than exist.
            try request.checkJSONContentType()
            let declared = state.preferences.declarations.count
            if let count = JSONShape.topLevelMemberCount(request.body, stopAbove: declared), count > declared {
                throw Problems.invalid("A PATCH names at most \(declared) keys (one per declared preference); this one names more.")
            }
            request.process(responder, { () throws(ProblemDetails) in try request.decode(PreferenceMergePatch.self) }) { body in
                merge(body, request: request, responder: responder, attempt: 1)
            }
        }
        router.get("/preferences/{key}") { request, responder in
            let key = request.parameter("key") ?? ""
            if let asOf, let point = request.query("asOf") { return try asOf.preference(key, raw: point, responder: responder) }
            // Only declared keys get a cached record, and declarations never change: a key with
            // one needs no declaration lookup (the common read, about 0.8K instructions).
            let cached = state.preferences.mayBeKey(key) ? cache.records[key] : nil
            if cached == nil { _ = try declaredKey(request) }
            // A cached record checked at the current global revision is current (nothing
            // changed anywhere since): no lookup of the key's revision.
            let global = state.revision
            let revision: UInt64
            if let cached, cached.checkedAt == global {
                revision = cached.revision
            } else {
                revision = state.revision(ofPreference: key)
                if let cached, cached.revision == revision { cached.checkedAt = global }
            }
            // `If-None-Match` → 304 is the caching middleware's (`HTTPCaching`), on the ETag
            // below, so the gzip representation's tag is matched the same way.
            if let cached, cached.revision == revision { return responder.send(cached.response) }
            responder.send(recordResponse(key, revision: revision))
        }
        router.put("/preferences/{key}") { request, responder in
            let key = try declaredKey(request)
            request.process(responder, { () throws(ProblemDetails) -> PreferenceInput in
                let body = try request.decode(ValueBody.self)
                guard body.hasValue else {
                    throw Problems.invalid("The body must hold the new value as {\"value\": ...}.",
                                           errors: [.init(key: key, detail: "missing value")])
                }
                // JSON null is not a value of any type; DELETE resets a key.
                return body.value ?? .unsupported(kind: "null")
            }) { input in
                write(PreferencePatch([key: input]), key: key, request: request, responder: responder)
            }
        }
        router.delete("/preferences/{key}") { request, responder in
            let key = try declaredKey(request)
            write(PreferencePatch([key: .reset]), key: key, request: request, responder: responder)
        }
    }

    /// How many times a merge is made again on values other writes changed first.
    static let mergeAttempts = 8

    /// `PATCH /preferences` (API.md "Preferences"): the merge patch resolved against the values
    /// in memory (an object preference's members merged onto its current value, RFC 7396), checked
    /// and written as one write. A key merged onto its value must still be at that value's revision
    /// when the store commits (the store checks it in the transaction), so a write another request
    /// or instance committed in between is never undone: the merge is made again on the newer
    /// value once this instance has applied it.
    private func merge(_ body: PreferenceMergePatch, request: Request, responder: Responder, attempt: Int) {
        let (patch, merged) = state.preferences.resolve(body)
        var basis: [String: Set<UInt64>] = [:]
        for key in merged { basis[key] = [state.revision(ofPreference: key)] }
        writes.submit(.preferences(patch, ifMatch: basis), from: request) { result in
            switch result {
            case .success: responder.send(mapResponse())
            case let .failure(.preconditionFailed(key, current)) where basis[key] != nil:
                guard attempt < Self.mergeAttempts else {
                    return responder.send(.problem(ProblemDetails(
                        status: .conflict,
                        detail: "Preference '\(key)' kept changing while this merge patch was applied to it; nothing was changed. Send it again.")))
                }
                Task { @MainActor in
                    await writes.applied(current)
                    merge(body, request: request, responder: responder, attempt: attempt + 1)
                }
            case let .failure(failure): responder.send(.problem(Problems.forWrite(failure)))
            }
        }
    }

    private func declaredKey(_ request: Request) throws(ProblemDetails) -> String {
        let key = request.parameters["key"] ?? ""
        guard state.preferences.declaration(forKey: key) != nil else { throw Problems.unknownPreference(key) }
        return key
    }

    private func write(_ patch: PreferencePatch, key: String, request: Request, responder: Responder) {
        var ifMatch: [String: Set<UInt64>] = [:]
        if let tags = request.entityTags(.ifMatch), !tags.contains("*") {
            // Tags that are not revisions can never match; an empty set fails the write.
            ifMatch[key] = Set(tags.compactMap { UInt64($0) })
        }
        writes.submit(.preferences(patch, ifMatch: ifMatch), from: request) { result in
            switch result {
            case let .success(.preferences(changed)):
                // The record as this write left it (another write may already be applied too).
                if let own = changed.first(where: { $0.key == key }), own.revision != state.revision(ofPreference: key) {
                    let declaration = state.preferences.declaration(forKey: key)!
                    let record = PreferenceRecord(key: key, value: own.value, default: declaration.defaultValue,
                                                  type: declaration.type, revision: own.revision)
                    responder.send(.json(bytes: Array(EventFrame.json(record).utf8), headers: [.eTag: EntityTag(revision: own.revision).header]))
                } else {
                    responder.send(recordResponse(key))
                }
            case .success: responder.send(recordResponse(key))
            case let .failure(failure): responder.send(.problem(Problems.forWrite(failure)))
            }
        }
    }

    /// The key's record, built once per revision of that key: a value only changes together
    /// with its revision, so reads between changes reuse the whole answer (body and ETag).
    private func recordResponse(_ key: String) -> Response {
        recordResponse(key, revision: state.revision(ofPreference: key))
    }

    /// The record at `revision`, the key's current one (looked up once by a caller that has it).
    private func recordResponse(_ key: String, revision: UInt64) -> Response {
        if let cached = cache.records[key], cached.revision == revision { return cached.response }
        let declaration = state.preferences.declaration(forKey: key)!
        let record = PreferenceRecord(key: key, value: state.preferences.value(forKey: key)!,
                                      default: declaration.defaultValue, type: declaration.type, revision: revision)
        let response = Response.json(bytes: Array(EventFrame.json(record).utf8), headers: [.eTag: EntityTag(revision: revision).header])
        cache.records[key] = EncodedRecords.Record(revision: revision, response: response, checkedAt: state.revision)
        return response
    }

    /// Every key's value, encoded once per global revision; its `ETag` is the revision of the
    /// latest preference change (the map changes only with one).
    private func mapResponse() -> Response {
        if let cached = cache.map, cached.revision == state.revision { return cached.response }
        // In declaration order (the order the settings were declared in), not hash order.
        let members = state.preferences.declarations.map { declaration in
            EventFrame.json(declaration.key) + ":" + EventFrame.json(state.preferences.value(forKey: declaration.key)!)
        }
        let latest = state.latestPreferenceRevision
        let response = Response.json(bytes: Array(("{" + members.joined(separator: ",") + "}").utf8),
                                     headers: [.eTag: EntityTag(revision: latest).header])
        cache.map = (state.revision, response)
        return response
    }
}

/// Encoded answers of the preference reads, by the revision they show.
@MainActor
private final class EncodedRecords {
    /// A key's encoded record, and the global revision at which it was last known current.
    final class Record {
        let revision: UInt64
        let response: Response
        var checkedAt: UInt64

        init(revision: UInt64, response: Response, checkedAt: UInt64) {
            self.revision = revision
            self.response = response
            self.checkedAt = checkedAt
        }
    }

    var records: [String: Record] = [:]
    var map: (revision: UInt64, response: Response)?

}
