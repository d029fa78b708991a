import EventHTTP
import HTTPTypes
import Observing
import TidingsStore

/// `POST /preferences/rollback {"revision": R, "keys"?: [...]}` and
/// `POST /things/rollback {"revision": R}` (API.md "History"): the resource set back to its
/// state as of R, as one ordinary write through the write pipeline — atomic (every key is set
/// to its value as of R inside one store transaction, which skips keys already there, so a
/// concurrent write cannot make it half-apply), conditional on `If-Match` with the current
/// global revision, recorded with the caller as actor and `rollback to R` as reason unless
/// `Tidings-Reason` says otherwise, and announced on streams like any write. Nothing to change:
/// 200 and no new revision. The answer: `{"revision": R, "changes": [records made]}`.
@MainActor
struct RollbackRoutes {
    let state: TidingsState
    let store: any ChangeStore
    let writes: WritePipeline

    private struct PreferencesBody: Decodable {
        let revision: UInt64
        let keys: [String]?
    }

    private struct ThingsBody: Decodable {
        let revision: UInt64
    }

    func register(on router: any RouteRegistrar) {
        router.post("/preferences/rollback") { request, responder in
            let body = try request.decode(PreferencesBody.self)
            let declared = state.preferences.declarations.map(\.key)
            var keys = declared
            if let named = body.keys {
                guard !named.isEmpty else {
                    throw Problems.invalid("'keys' is empty; leave it out to roll every preference back.")
                }
                let unknown = Set(named).subtracting(declared).sorted()
                if !unknown.isEmpty {
                    throw Problems.invalid("There is no preference '\(unknown[0])'.",
                                           errors: unknown.map { .init(key: $0, detail: "unknown preference") })
                }
                keys = declared.filter(Set(named).contains)
            }
            let author = try author(request, revision: body.revision)
            let ifMatch = globalIfMatch(request)
            rollback(to: body.revision, responder: responder) { past in
                keys.map { key in
                    let declaration = state.preferences.declaration(forKey: key)!
                    let defaultJSON = EventFrame.json(declaration.defaultValue)
                    // Read from the history (outside input): decoded and checked here, once; a
                    // value that no longer fits the declaration goes back to the default.
                    let value = past.preferences[key]?.json.flatMap { TidingsState.preferenceValue(json: $0, declaration: declaration) }
                    let operation = WriteOperation.setPreference(key: key, json: value.map { EventFrame.json($0) }, defaultJSON: defaultJSON)
                    return (operation, value ?? declaration.defaultValue)
                }
            } submit: { operations, completion in
                writes.submit(.rollback(operations, ifRevision: ifMatch), author: author, completion: completion)
            }
        }
        router.post("/things/rollback") { request, responder in
            let body = try request.decode(ThingsBody.self)
            let author = try author(request, revision: body.revision)
            let ifMatch = globalIfMatch(request)
            rollback(to: body.revision, responder: responder) { past in
                [(.replaceThings(past.things), nil)]
            } submit: { operations, completion in
                writes.submit(.rollback(operations, ifRevision: ifMatch), author: author, completion: completion)
            }
        }
    }

    private func author(_ request: Request, revision: UInt64) throws(ProblemDetails) -> WriteAuthor {
        do {
            var author = try WriteAuthor(request, credentials: writes.credentials)
            if author.reason == nil { author.reason = "rollback to \(revision)" }
            return author
        } catch {
            throw Problems.forWrite(error)
        }
    }

    /// `If-Match` on the global revision: the tags that are revisions (none matches nothing);
    /// nil without the header or with `*`.
    private func globalIfMatch(_ request: Request) -> Set<UInt64>? {
        guard let tags = request.entityTags(.ifMatch), !tags.contains("*") else { return nil }
        return Set(tags.compactMap { UInt64($0) })
    }

    private func rollback(to revision: UInt64, responder: Responder,
                          plan: @escaping @MainActor (HistoricalState) -> [RollbackOperation],
                          submit: @escaping @MainActor ([RollbackOperation], @escaping WritePipeline.Completion) -> Void) {
        Task { @MainActor in
            let past: HistoricalState
            do {
                past = try await store.state(asOf: .revision(revision), environment: state.environment)
            } catch {
                responder.send(HistoryProblems.forStore(error))
                return
            }
            submit(plan(past)) { result in
                switch result {
                case let .success(.rolledBack(changes)):
                    let records = changes.compactMap { HistoryRecord.json($0, preferences: state.preferences) }
                    let json = #"{"revision":"# + String(revision) + #","changes":["# + records.joined(separator: ",") + "]}"
                    responder.send(.json(bytes: Array(json.utf8)))
                case let .failure(.preconditionFailed(key, current)) where key.isEmpty:
                    responder.send(.problem(ProblemDetails(
                        status: .preconditionFailed, detail: "The global revision is \(current), not the one If-Match names.",
                        headers: [.eTag: EntityTag(revision: current).header])))
                case let .failure(failure):
                    responder.send(.problem(Problems.forWrite(failure)))
                case .success:
                    responder.send(.problem(status: .internalServerError, detail: "The rollback could not be answered."))
                }
            }
        }
    }
}
