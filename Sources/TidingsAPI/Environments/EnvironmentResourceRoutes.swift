import EventHTTP
import Foundation
import HTTPTypes
import Observing
import TidingsStore

/// `GET /environments`, `GET`, `PUT` and `DELETE /environments/{env}` and
/// `POST /environments/{env}/promote` (API.md "Environments"). Every change they make is one
/// ordinary write through an environment's write pipeline: creating (with its copied values)
/// and promoting are atomic, recorded and announced like any other write, and reach every
/// instance through the change table.
@MainActor
struct EnvironmentResourceRoutes {
    let environments: Environments
    let store: any ChangeStore
    /// Whether the request's credential may reach an environment other than the one its path
    /// names (a promote's source); the path's own is checked by the access check.
    var mayReach: @MainActor (Request, String) -> Bool = { _, _ in true }

    /// The members are optional, and none may be `null` (the contract's schema).
    private struct CreateBody: Decodable {
        let copyFrom: String?
        let asOf: FlexibleRevision?

        private enum CodingKeys: String, CodingKey { case copyFrom, asOf }

        init(copyFrom: String?, asOf: FlexibleRevision?) {
            (self.copyFrom, self.asOf) = (copyFrom, asOf)
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            copyFrom = try container.decodeUnlessNull(String.self, forKey: .copyFrom)
            asOf = try container.decodeUnlessNull(FlexibleRevision.self, forKey: .asOf)
        }
    }

    /// As ``CreateBody``: optional members, none `null`.
    private struct PromoteBody: Decodable {
        let from: String?
        let keys: [String]?
        let things: Bool?
        let asOf: FlexibleRevision?

        private enum CodingKeys: String, CodingKey { case from, keys, things, asOf }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            from = try container.decodeUnlessNull(String.self, forKey: .from)
            keys = try container.decodeUnlessNull([String].self, forKey: .keys)
            things = try container.decodeUnlessNull(Bool.self, forKey: .things)
            asOf = try container.decodeUnlessNull(FlexibleRevision.self, forKey: .asOf)
        }
    }

    func register(on router: any RouteRegistrar) {
        router.get("/environments") { request, responder in
            // What the store knows, not only what this instance's change watch brought so far:
            // an environment just created or deleted through another instance is listed as such.
            environments.afterCatchingUp {
                let listed = environments.all.filter { mayReach(request, $0.name) }.map(Self.record)
                responder.send(.json(bytes: Array(("{\"environments\":[" + listed.joined(separator: ",") + "]}").utf8),
                                     headers: [.cacheControl: "no-cache"]))
            }
        }
        router.get(EnvironmentRoutes.prefix) { request, responder in
            knowingNames(request, responder) {
                let context = try existing(request)
                responder.send(.json(bytes: Array(Self.record(context).utf8), headers: [.cacheControl: "no-cache"]))
            }
        }
        router.put(EnvironmentRoutes.prefix) { request, responder in knowingNames(request, responder) { try create(request, responder) } }
        router.delete(EnvironmentRoutes.prefix) { request, responder in knowingNames(request, responder) { try delete(request, responder) } }
        router.post(EnvironmentRoutes.prefix + "/promote") { request, responder in
            knowingNames(request, responder) { try promote(request, responder) }
        }
    }

    /// The environments a request names: its path's, and a body's `from` or `copyFrom`.
    private struct NamedSource: Decodable {
        let from: String?
        let copyFrom: String?
    }

    /// Runs `handler` once every environment the request names is known here if it exists
    /// (``Environments/knowing(_:then:)``: one created through another instance a moment ago),
    /// answering what it throws.
    private func knowingNames(_ request: Request, _ responder: Responder, _ handler: @escaping @MainActor () throws -> Void) {
        var names = [request.environmentName]
        if !request.body.isEmpty, let source = try? JSONDecoder().decode(NamedSource.self, from: Data(request.body)) {
            names += [source.from, source.copyFrom].compactMap { $0 }
        }
        environments.knowing(names) {
            do { try handler() } catch { responder.send(.error(error)) }
        }
    }

    // MARK: Create

    private func create(_ request: Request, _ responder: Responder) throws {
        let name = request.environmentName
        guard EnvironmentName.isValid(name) else {
            throw ProblemDetails(status: .badRequest,
                                 detail: "An environment's name matches ^[a-z][a-z0-9-]{0,31}$; \"\(String(name.prefix(64)))\" does not.")
        }
        let body = request.body.isEmpty ? CreateBody(copyFrom: nil, asOf: nil) : try request.decode(CreateBody.self)
        // A bad `Tidings-Reason` is refused also when there is nothing to write.
        do { _ = try WriteAuthor(request, credentials: environments.main.writes.credentials) } catch { throw Problems.forWrite(error) }
        if let existing = environments.context(name) {
            return responder.send(.json(bytes: Array(Self.record(existing).utf8), headers: [.cacheControl: "no-cache"]))
        }
        guard environments.contexts.count < environments.limit else {
            throw Problems.environment(.tooMany(limit: environments.limit))
        }
        var source: EnvironmentContext?
        if let copyFrom = body.copyFrom {
            guard let found = environments.context(copyFrom) else {
                throw Problems.invalid("'copyFrom' names no environment: \"\(String(copyFrom.prefix(64)))\".",
                                       errors: [.init(key: "copyFrom", detail: "unknown environment")])
            }
            guard mayReach(request, copyFrom) else { throw Self.forbidden(copyFrom) }
            source = found
        } else if body.asOf != nil {
            throw Problems.invalid("'asOf' needs 'copyFrom': a new environment starts from the declared defaults.")
        }
        let point = try body.asOf.map(Self.point)
        let limit = environments.limit
        let main = environments.main
        read(source, at: point, responder: responder) { values, things in
            var operations: [RollbackOperation] = [(.createEnvironment(copiedFrom: source?.name, limit: limit), nil)]
            for declaration in main.state.preferences.declarations {
                guard let value = values[declaration.key], value != declaration.defaultValue else { continue }
                operations.append((.setPreference(key: declaration.key, json: EventFrame.json(value),
                                                  defaultJSON: EventFrame.json(declaration.defaultValue)), value))
            }
            if !things.isEmpty { operations.append((.replaceThings(things), nil)) }
            main.writes.submit(.operations(operations, environment: name, ifRevision: nil), from: request) { result in
                switch result {
                case .success, .failure(.environment(.exists)):
                    // Created through another instance meanwhile: its change may still be on its way here.
                    environments.knowing([name]) {
                        guard let created = environments.context(name) else {
                            return responder.send(.problem(Problems.unknownEnvironment(name)))
                        }
                        let status: HTTPResponse.Status = result.isSuccess ? .created : .ok
                        responder.send(.json(bytes: Array(Self.record(created).utf8), status: status,
                                             headers: [.location: "/environments/" + name, .cacheControl: "no-cache"]))
                    }
                case let .failure(failure):
                    responder.send(.problem(Problems.forWrite(failure)))
                }
            }
        }
    }

    // MARK: Delete

    private func delete(_ request: Request, _ responder: Responder) throws {
        let context = try existing(request)
        guard context !== environments.main else { throw Problems.environment(.isDefault) }
        let record = Self.record(context)
        context.writes.submit(.operations([(.deleteEnvironment, nil)], environment: nil, ifRevision: Self.globalIfMatch(request)),
                              from: request) { result in
            switch result {
            case .success:
                responder.send(.json(bytes: Array(record.utf8), headers: [.cacheControl: "no-cache"]))
            case let .failure(failure):
                responder.send(Self.answer(failure))
            }
        }
    }

    // MARK: Promote

    private func promote(_ request: Request, _ responder: Responder) throws {
        let target = try existing(request)
        let body = try request.decode(PromoteBody.self)
        guard let from = body.from else {
            throw Problems.invalid("'from' is missing: name the environment to promote from.",
                                   errors: [.init(key: "from", detail: "missing")])
        }
        guard let source = environments.context(from) else {
            throw Problems.invalid("'from' names no environment: \"\(String(from.prefix(64)))\".",
                                   errors: [.init(key: "from", detail: "unknown environment")])
        }
        guard mayReach(request, from) else { throw Self.forbidden(from) }
        let declared = target.state.preferences.declarations.map(\.key)
        var keys = declared
        if let named = body.keys {
            guard !named.isEmpty else { throw Problems.invalid("'keys' is empty; leave it out to promote every preference.") }
            let unknown = Set(named).subtracting(declared).sorted()
            if !unknown.isEmpty {
                throw Problems.invalid("There is no preference '\(unknown[0])'.",
                                       errors: unknown.map { .init(key: $0, detail: "unknown preference") })
            }
            keys = declared.filter(Set(named).contains)
        }
        let point = try body.asOf.map(Self.point)
        let dryRun = try ApplyRoutes.flag(request, "dryRun")
        let promoteThings = body.things == true
        var author: WriteAuthor
        do { author = try WriteAuthor(request, credentials: target.writes.credentials) } catch { throw Problems.forWrite(error) }
        if author.reason == nil { author.reason = "promote from \(from)" }
        let ifMatch = Self.globalIfMatch(request)
        read(source, at: point, responder: responder) { values, things in
            let state = target.state
            var diff: [String] = []
            var operations: [RollbackOperation] = []
            for key in keys {
                guard let declaration = state.preferences.declaration(forKey: key),
                      let before = state.preferences.value(forKey: key) else { continue }
                let after = values[key] ?? declaration.defaultValue
                guard before != after else { continue }
                var change = JSONObjectWriter()
                change.string("key", key)
                change.raw("before", EventFrame.json(before))
                change.raw("after", EventFrame.json(after))
                diff.append(change.json)
                let json = after == declaration.defaultValue && values[key] == nil ? nil : EventFrame.json(after)
                operations.append((.setPreference(key: key, json: json, defaultJSON: EventFrame.json(declaration.defaultValue)), after))
            }
            var thingsDiff: String?
            if promoteThings {
                var change = JSONObjectWriter()
                change.raw("before", EventFrame.json(state.things.things))
                change.raw("after", EventFrame.json(things))
                thingsDiff = change.json
                if state.things.things != things { operations.append((.replaceThings(things), nil)) }
            }
            if dryRun {
                var answer = JSONObjectWriter()
                answer.raw("changes", "[" + diff.joined(separator: ",") + "]")
                if let thingsDiff { answer.raw("things", thingsDiff) }
                return responder.send(.json(bytes: answer.bytes, headers: [.cacheControl: "no-store"]))
            }
            target.writes.submit(.operations(operations, environment: nil, ifRevision: ifMatch), author: author) { result in
                switch result {
                case let .success(.rolledBack(changes)):
                    let records = changes.compactMap { HistoryRecord.json($0, preferences: state.preferences) }
                    var answer = JSONObjectWriter()
                    answer.string("from", from)
                    answer.raw("changes", "[" + records.joined(separator: ",") + "]")
                    responder.send(.json(bytes: answer.bytes, headers: [.cacheControl: "no-store"]))
                case let .failure(failure):
                    responder.send(Self.answer(failure))
                case .success:
                    responder.send(.problem(status: .internalServerError, detail: "The promotion could not be answered."))
                }
            }
        }
    }

    // MARK: Helpers

    /// The environment the path names, or a 404 naming it.
    private func existing(_ request: Request) throws(ProblemDetails) -> EnvironmentContext {
        let name = request.environmentName
        guard let context = environments.context(name) else { throw Problems.unknownEnvironment(name) }
        return context
    }

    /// `source`'s preference values (declared keys only) and things, as of `point` (read from
    /// the history) or now (from memory); none for no source.
    private func read(_ source: EnvironmentContext?, at point: HistoryPoint?, responder: Responder,
                      then: @escaping @MainActor ([String: PreferenceValue], [String]) -> Void) {
        guard let source else { return then([:], []) }
        let preferences = source.state.preferences
        guard let point else {
            var values: [String: PreferenceValue] = [:]
            for declaration in preferences.declarations {
                if let value = preferences.value(forKey: declaration.key) { values[declaration.key] = value }
            }
            return then(values, source.state.things.things)
        }
        Task { @MainActor [store] in
            let past: HistoricalState
            do {
                past = try await store.state(asOf: point, environment: source.name)
            } catch {
                return responder.send(HistoryProblems.forStore(error))
            }
            var values: [String: PreferenceValue] = [:]
            for declaration in preferences.declarations {
                values[declaration.key] = past.preferences[declaration.key]?.json
                    .flatMap { TidingsState.preferenceValue(json: $0, declaration: declaration) } ?? declaration.defaultValue
            }
            then(values, past.things)
        }
    }

    /// A body's `asOf` as a point of the history; neither a revision nor a time is invalid
    /// content (422), not a malformed query.
    private static func point(_ raw: FlexibleRevision) throws(ProblemDetails) -> HistoryPoint {
        do {
            return try AsOfReads.point(raw.text)
        } catch {
            throw Problems.invalid(error.detail, errors: [.init(key: "asOf", detail: "neither a revision nor an RFC 3339 time")])
        }
    }

    /// `{"name", "createdAt", "revision", "copiedFrom"?}`.
    static func record(_ context: EnvironmentContext) -> String {
        var record = JSONObjectWriter()
        record.string("name", context.name)
        record.string("createdAt", RFC3339.string(microseconds: context.createdAt))
        record.integer("revision", context.revision)
        if let copiedFrom = context.copiedFrom { record.string("copiedFrom", copiedFrom) }
        return record.json
    }

    static func forbidden(_ name: String) -> ProblemDetails {
        ProblemDetails(status: .forbidden, detail: "Your credential does not reach the environment \"\(name)\".")
    }

    /// `If-Match` on the global revision (nil without it or with `*`).
    static func globalIfMatch(_ request: Request) -> Set<UInt64>? {
        guard let tags = request.entityTags(.ifMatch), !tags.contains("*") else { return nil }
        return Set(tags.compactMap { UInt64($0) })
    }

    static func answer(_ failure: WriteFailure) -> Response {
        if case let .preconditionFailed(key, current) = failure, key.isEmpty {
            return .problem(ProblemDetails(status: .preconditionFailed,
                                           detail: "The global revision is \(current), not the one If-Match names.",
                                           headers: [.eTag: EntityTag(revision: current).header]))
        }
        return .problem(Problems.forWrite(failure))
    }
}

/// A revision given as a JSON number, or a revision or RFC 3339 time as a string.
private struct FlexibleRevision: Decodable {
    let text: String

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(UInt64.self) { text = String(number) } else { text = try container.decode(String.self) }
    }
}

extension Result {
    fileprivate var isSuccess: Bool { if case .success = self { true } else { false } }
}
