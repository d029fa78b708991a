import EventHTTP
import HTTPTypes
import Observing
import TidingsStore

/// `POST /apply` (API.md "Changes as code"): makes the configuration match a document — JSON,
/// or YAML with `Content-Type: application/yaml` — as one ordinary write through the write
/// pipeline: every preference named is set, the others are left alone (`?prune=true`: reset to
/// their defaults), `things`, if present, replaces the list. All or nothing: any bad value is a
/// 422 naming every bad key. Conditional on `If-Match` with the current global revision, recorded
/// with the caller as actor and `Tidings-Reason` as reason, announced on streams like any write.
///
/// Answers 200 `{"revision": R, "changes": [the history records it made]}` (none: nothing
/// differed, no revision taken); with `?dryRun=true`, 200 `{"changes": [{"key", "before",
/// "after"}], "things"?: {"before", "after"}}` and nothing written.
@MainActor
struct ApplyRoutes {
    let state: TidingsState
    let writes: WritePipeline

    func register(on router: any RouteRegistrar) {
        router.post("/apply") { request, responder in
            let prune = try Self.flag(request, "prune")
            let dryRun = try Self.flag(request, "dryRun")
            let author: WriteAuthor
            do throws(WriteFailure) { author = try WriteAuthor(request, credentials: writes.credentials) } catch { throw Problems.forWrite(error) }
            let ifMatch = Self.globalIfMatch(request)
            Task { @MainActor in
                let document: ApplyDocument
                switch await ApplyDocument.read(request, textCase: state.textCase, declared: state.preferences.declarations.count) {
                case let .success(read): document = read
                case let .failure(problem): return responder.send(.problem(problem))
                }
                let plan: ApplyPlan
                do throws(ProblemDetails) { plan = try ApplyPlan(document, prune: prune, state: state) } catch {
                    return responder.send(.problem(error))
                }
                if dryRun {
                    if let ifMatch, !ifMatch.contains(state.revision) {
                        return responder.send(Self.preconditionFailed(current: state.revision))
                    }
                    return responder.send(.json(bytes: plan.dryRunJSON))
                }
                writes.submit(.rollback(plan.operations, ifRevision: ifMatch), author: author) { result in
                    responder.send(Self.answer(result, state: state))
                }
            }
        }
    }

    /// The answer to a committed (or refused) write of a document or a schedule.
    static func answer(_ result: Result<WriteOutcome, WriteFailure>, state: TidingsState) -> Response {
        switch result {
        case let .success(.rolledBack(changes)):
            let records = changes.compactMap { HistoryRecord.json($0, preferences: state.preferences) }
            let json = #"{"revision":"# + String(state.revision) + #","changes":["# + records.joined(separator: ",") + "]}"
            return .json(bytes: Array(json.utf8))
        case let .failure(.preconditionFailed(key, current)) where key.isEmpty:
            return preconditionFailed(current: current)
        case let .failure(failure):
            return .problem(Problems.forWrite(failure))
        case .success:
            return .problem(status: .internalServerError, detail: "The apply could not be answered.")
        }
    }

    static func preconditionFailed(current: UInt64) -> Response {
        .problem(ProblemDetails(status: .preconditionFailed, detail: "The global revision is \(current), not the one If-Match names.",
                                headers: [.eTag: EntityTag(revision: current).header]))
    }

    /// `?name=true|false` (absent: false); anything else is a 400.
    static func flag(_ request: Request, _ name: String) throws(ProblemDetails) -> Bool {
        guard let raw = request.query(name) else { return false }
        switch raw.lowercased() {
        case "true", "1", "": return true
        case "false", "0": return false
        default: throw Problems.badQuery("'\(name)' must be true or false.")
        }
    }

    /// `If-Match` on the global revision: the tags that are revisions (none matches nothing);
    /// nil without the header or with `*`.
    static func globalIfMatch(_ request: Request) -> Set<UInt64>? {
        guard let tags = request.entityTags(.ifMatch), !tags.contains("*") else { return nil }
        return Set(tags.compactMap { UInt64($0) })
    }
}
