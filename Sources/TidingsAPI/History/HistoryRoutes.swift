import EventHTTP
import HTTPTypes
import Foundation
import Observing
import TidingsStore

/// `GET /history`, `GET /preferences/{key}/history`, `GET /things/history` (API.md "History"):
/// pages of change records read from the store's change table, newest first (`before`) or
/// oldest first (`after`), at most `limit` records and about 1 MiB each, the next page in
/// `next` and in `Link: <...>; rel="next"`.
@MainActor
struct HistoryRoutes {
    let state: TidingsState
    let store: any ChangeStore

    func register(on router: RouteGroup) {
        router.get("/history") { request, responder in
            let page = try HistoryPageRequest.parse(request, declared: declaredKeys, scope: .all)
            answer(page, path: "/history", responder: responder)
        }
        router.get("/preferences/{key}/history") { request, responder in
            let key = request.parameters["key"] ?? ""
            guard state.preferences.declaration(forKey: key) != nil else { throw Problems.unknownPreference(key) }
            let page = try HistoryPageRequest.parse(request, declared: declaredKeys, scope: .preference(key))
            answer(page, path: "/preferences/\(percentEncodedPathSegment(key))/history", responder: responder)
        }
        router.get("/things/history") { request, responder in
            let page = try HistoryPageRequest.parse(request, declared: declaredKeys, scope: .things)
            answer(page, path: "/things/history", responder: responder)
        }
    }

    private var declaredKeys: [String] { state.preferences.declarations.map(\.key) }

    private func answer(_ page: HistoryPageRequest, path: String, responder: Responder) {
        let query = page.storeQuery
        Task { @MainActor in
            let changes: [Change]
            do {
                changes = try await store.history(query)
            } catch {
                responder.send(HistoryProblems.forStore(error))
                return
            }
            responder.send(Self.body(changes, page: page, path: path, preferences: state.preferences))
        }
    }

    /// The page: records in order until `limit` or the byte bound, and the next page's URL
    /// when more records exist.
    static func body(_ changes: [Change], page: HistoryPageRequest, path: String, preferences: TidingsPreferences) -> Response {
        var records: [String] = []
        var bytes = 0
        var last: UInt64?
        // The store ends a page early once its records pass the byte bound (their sizes then
        // sum to at least the bound): more may follow.
        var more = changes.count > page.limit || changes.reduce(0, { $0 + $1.byteCount }) >= HistoryPageRequest.maxPageBytes
        for change in changes.prefix(page.limit) {
            guard let record = HistoryRecord.json(change, preferences: preferences) else { continue }
            if !records.isEmpty, bytes + record.utf8.count + 1 > HistoryPageRequest.maxPageBytes {
                more = true
                break
            }
            records.append(record)
            bytes += record.utf8.count + 1
            last = change.revision
        }
        let next = more ? last.map { page.next(path: path, after: $0) } : nil
        let json = #"{"changes":["# + records.joined(separator: ",") + #"],"next":"# + (next.map { EventFrame.json($0) } ?? "null") + "}"
        var headers: HTTPFields = [.cacheControl: "no-cache"]
        if let next { headers[.link] = "<\(next)>; rel=\"next\"" }
        return Response.json(bytes: Array(json.utf8), headers: headers)
    }
}

/// Problems of the history reads. A revision past retention (410) and one in the future (422)
/// name the revision that bounds what can be read, as a member of the problem
/// (`oldestRevision`, `currentRevision`), so a client can retry with it.
enum HistoryProblems {
    static func forStore(_ error: any Error) -> Response {
        switch error as? StoreError {
        case let .beyondHistory(oldest)?:
            return problem(.gone, "That revision is older than the retained history; the oldest revision that can be read is \(oldest).",
                           member: "oldestRevision", revision: oldest)
        case let .futureRevision(current)?:
            return problem(.unprocessableContent, "That revision is newer than the current revision \(current).",
                           member: "currentRevision", revision: current)
        default:
            return .problem(status: .serviceUnavailable, detail: "The history could not be read right now; nothing was changed. Try again.",
                            headers: [.retryAfter: "1"])
        }
    }

    private static func problem(_ status: HTTPResponse.Status, _ detail: String, member: String, revision: UInt64) -> Response {
        var body = JSONObjectWriter()
        body.string("type", "about:blank")
        body.string("title", status.reasonPhrase)
        body.integer("status", UInt64(status.code))
        body.string("detail", detail)
        body.integer(member, revision)
        return Response(status: status, headers: [.contentType: "application/problem+json"], body: body.bytes)
    }
}
