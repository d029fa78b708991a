import EventHTTP
import Foundation
import HTTPTypes
import Observing
import TidingsModel
import TidingsStore

/// `POST /schedules`, `GET /schedules` (`?state=`, `?limit=`), `GET /schedules/{id}` and
/// `DELETE /schedules/{id}` (API.md "Changes as code"), per environment: installed for each one
/// (``EnvironmentRoutes``), so `/environments/{env}/schedules` makes, lists and cancels that
/// environment's schedules (the unprefixed paths: `default`'s), and a schedule is applied in the
/// environment it was made in. A schedule is checked when it is made
/// (every bad key → 422; `at` in the past or more than a year ahead → 422; at most
/// ``ScheduleLimits/maxPending`` pending → 409) and stored; ``ScheduleRunner`` applies it.
@MainActor
struct ScheduleRoutes {
    let state: TidingsState
    let store: any ChangeStore & ScheduleStore
    /// The environment's writes: a read that shows a schedule `applied` waits until its change is here.
    let writes: WritePipeline
    let runner: ScheduleRunner
    /// The environment these routes make and read schedules in.
    var environment: String { state.environment }

    /// How far ahead a schedule may be (a year, leap day included).
    static let maxAheadMicroseconds: Int64 = 366 * 86_400 * 1_000_000

    func register(on router: any RouteRegistrar) {
        router.post("/schedules") { request, responder in
            let author: WriteAuthor
            do throws(WriteFailure) { author = try WriteAuthor(request, credentials: credentials) } catch { throw Problems.forWrite(error) }
            let textCase = state.textCase
            request.process(responder, { () throws(ProblemDetails) -> (ScheduleWork.Body, ApplyDocument) in
                let body = try request.decode(ScheduleWork.Body.self)
                var document = ApplyDocument(preferences: body.preferences ?? PreferencePatch([:]))
                if let raws = body.things {
                    do throws(ThingError) { document.things = try ThingRules.validateList(raws, textCase: textCase) } catch {
                        document.thingsProblem = error
                    }
                }
                return (body, document)
            }) { body, document in
                create(body, document: document, author: author, prefix: request.environmentPrefix, responder: responder)
            }
        }
        router.get("/schedules") { request, responder in
            var wanted: StoredSchedule.State?
            if let raw = request.query("state") {
                guard let parsed = StoredSchedule.State(rawValue: raw) else {
                    throw Problems.badQuery("'state' must be one of pending, applied, failed, cancelled.")
                }
                wanted = parsed
            }
            var limit = 100
            if let raw = request.query("limit") {
                guard let parsed = Int(raw), (1...1_000).contains(parsed) else { throw Problems.badQuery("'limit' must be 1 to 1000.") }
                limit = parsed
            }
            var after: ScheduleCursor?
            if let raw = request.query("after") {
                guard let cursor = ScheduleRecord.cursor(raw) else {
                    throw Problems.badQuery("'after' must be the cursor a page's 'next' link carries.")
                }
                after = cursor
            }
            let path = request.environmentPrefix + "/schedules"
            Task { @MainActor in
                do {
                    // One more than the page, to know whether there is a next one.
                    let found = try await store.schedules(environment: environment, state: wanted, after: after, limit: limit + 1)
                    let page = found.prefix(limit)
                    await showApplied(page)
                    var next: String?
                    if found.count > limit, let last = page.last {
                        next = path + "?after=" + ScheduleRecord.cursor(last) + "&limit=\(limit)" + (wanted.map { "&state=" + $0.rawValue } ?? "")
                    }
                    let json = #"{"schedules":["# + page.map(ScheduleRecord.json).joined(separator: ",") + #"],"next":"#
                        + (next.map { EventFrame.json($0) } ?? "null") + "}"
                    var headers: HTTPFields = [.cacheControl: "no-cache"]
                    if let next { headers[.link] = "<\(next)>; rel=\"next\"" }
                    responder.send(.json(bytes: Array(json.utf8), headers: headers))
                } catch {
                    responder.send(.problem(Self.unavailable))
                }
            }
        }
        router.get("/schedules/{id}") { request, responder in
            let id = request.parameter("id") ?? ""
            guard ScheduleRecord.isID(id) else { throw Self.notFound(id) }
            Task { @MainActor in
                do {
                    guard let found = try await store.schedule(id: id), found.environment == environment else {
                        return responder.send(.problem(Self.notFound(id)))
                    }
                    await showApplied([found])
                    responder.send(.json(bytes: Array(ScheduleRecord.json(found).utf8), headers: [.cacheControl: "no-cache"]))
                } catch {
                    responder.send(.problem(Self.unavailable))
                }
            }
        }
        router.delete("/schedules/{id}") { request, responder in
            let id = request.parameter("id") ?? ""
            guard ScheduleRecord.isID(id) else { throw Self.notFound(id) }
            Task { @MainActor in
                do {
                    if let found = try await store.schedule(id: id), found.environment != environment {
                        return responder.send(.problem(Self.notFound(id)))
                    }
                    switch try await store.cancelSchedule(id: id, now: ScheduleClock.now) {
                    case let .cancelled(schedule):
                        runner.check()
                        responder.send(.json(bytes: Array(ScheduleRecord.json(schedule).utf8)))
                    case let .notPending(schedule):
                        let detail = schedule.state == .pending
                            ? "Schedule \(id) is being applied now; it can no longer be cancelled."
                            : "Schedule \(id) is \(schedule.state.rawValue), not pending; only a pending schedule can be cancelled."
                        responder.send(.problem(ProblemDetails(status: .conflict, detail: detail)))
                    case .notFound:
                        responder.send(.problem(Self.notFound(id)))
                    }
                } catch {
                    responder.send(.problem(Self.unavailable))
                }
            }
        }
    }

    /// Waits, at most a second, until the changes of the `applied` schedules among `schedules` are
    /// applied in this instance's memory. The schedule's state is read from the store, which has it
    /// as soon as the write commits, before the change reaches memory (or, on another instance,
    /// before its change feed reads it): without the wait, a client that sees `applied` and then
    /// reads the environment could see the value from before.
    private func showApplied(_ schedules: some Sequence<StoredSchedule>) async {
        guard let revision = schedules.compactMap({ $0.state == .applied ? $0.revision : nil }).max(),
              revision > state.revision else { return }
        await waitAtMost(.seconds(1)) { [writes] in await writes.applied(revision) }
    }

    /// The credentials that name the actor (set by the resources).
    var credentials: Credentials?

    private func create(_ body: ScheduleWork.Body, document: ApplyDocument, author: WriteAuthor, prefix: String, responder: Responder) {
        do throws(ProblemDetails) {
            let work = try check(body, document: document)
            guard let raw = body.at, let at = RFC3339.microseconds(raw) else {
                throw Problems.invalid("'at' must be an RFC 3339 time such as 2026-11-27T09:30:00Z.",
                                       errors: [.init(key: "at", detail: "not an RFC 3339 time")])
            }
            let now = ScheduleClock.now
            if at <= now {
                throw Problems.invalid("'at' is in the past (the server's time is \(RFC3339.string(microseconds: now))).",
                                       errors: [.init(key: "at", detail: "in the past")])
            }
            if at - now > Self.maxAheadMicroseconds {
                throw Problems.invalid("'at' is more than a year ahead.", errors: [.init(key: "at", detail: "more than a year ahead")])
            }
            Task { @MainActor in
                if let revision = work.rollback {
                    // The revision must be readable now (it is checked again when applied).
                    do {
                        _ = try await store.state(asOf: .revision(revision), environment: environment)
                    } catch {
                        return responder.send(.problem(ScheduleProblems.rollback(error, revision: revision)))
                    }
                }
                let schedule = StoredSchedule(id: ScheduleRecord.newID(), environment: environment, at: at, body: work.json,
                                              createdBy: author.actor, createdAt: now)
                do {
                    try await store.createSchedule(schedule, limits: runner.limits)
                } catch let error as ScheduleStoreError {
                    let problem = switch error {
                    case let .tooManyPending(limit):
                        ProblemDetails(status: .conflict, detail: "\(limit) schedules are pending already; cancel one or wait until one is applied.")
                    case let .tooManyPendingBytes(limit):
                        ProblemDetails(status: .conflict,
                                       detail: "The pending schedules hold \(limit) bytes already; cancel one or wait until one is applied.")
                    case let .unknownEnvironment(name):
                        // Deleted since the request was routed (through this instance or another).
                        Problems.unknownEnvironment(name)
                    }
                    return responder.send(.problem(problem))
                } catch {
                    return responder.send(.problem(Self.unavailable))
                }
                runner.check()
                let location = prefix + "/schedules/" + schedule.id
                responder.send(.json(bytes: Array(ScheduleRecord.json(schedule).utf8), status: .created, headers: [.location: location]))
            }
        } catch {
            responder.send(.problem(error))
        }
    }

    /// The work, checked against the declarations now; 422 naming every bad key.
    private func check(_ body: ScheduleWork.Body, document: ApplyDocument) throws(ProblemDetails) -> ScheduleWork {
        if let unknown = body.unknown {
            let shown = unknown.unicodeScalars.count > 64 ? String(String.UnicodeScalarView(unknown.unicodeScalars.prefix(64))) + "…" : unknown
            throw Problems.invalid("'\(shown)' is not a member of a schedule (at, preferences, things, rollback, reason).",
                                   errors: [.init(key: shown, detail: "unknown member")])
        }
        if let null = body.null {
            throw Problems.invalid("'\(null)' is null: leave the member out, or give it a value.",
                                   errors: [.init(key: null, detail: "must not be null")])
        }
        if body.rollback != nil, body.preferences != nil || body.things != nil {
            throw Problems.invalid("A schedule either rolls back or sets values, not both.",
                                   errors: [.init(key: "rollback", detail: "not with preferences or things")])
        }
        if body.rollback == nil, body.preferences == nil, body.things == nil {
            throw Problems.invalid("A schedule needs 'preferences', 'things' or 'rollback': there is nothing to apply.")
        }
        let declared = state.preferences.declarations.count
        if document.preferences.entries.count > declared {
            throw Problems.invalid("A schedule names at most \(declared) preferences (one per declared key).")
        }
        var reason: String?
        do throws(WriteFailure) { reason = try WriteAuthor.reason(body.reason) } catch {
            guard case let .invalidReason(detail) = error else { throw Problems.forWrite(error) }
            throw Problems.invalid(detail.replacingOccurrences(of: "Tidings-Reason", with: "'reason'"),
                                   errors: [.init(key: "reason", detail: detail.replacingOccurrences(of: "Tidings-Reason", with: "reason"))])
        }
        if body.rollback == nil { _ = try ApplyPlan(document, prune: false, state: state) }
        return ScheduleWork(preferences: body.preferences, things: document.things, rollback: body.rollback, reason: reason)
    }

    static func notFound(_ id: String) -> ProblemDetails {
        let shown = id.unicodeScalars.count > 64 ? String(String.UnicodeScalarView(id.unicodeScalars.prefix(64))) + "…" : id
        return Problems.notFound("There is no schedule '\(shown)'.")
    }

    static let unavailable = ProblemDetails(status: .serviceUnavailable, detail: "The schedules could not be read or written right now; try again.",
                                            headers: [.retryAfter: "1"])
}

/// A schedule as the API shows it.
enum ScheduleRecord {
    /// `{"id", "environment", "at", "state", "createdBy", "createdAt", "late", work..., "revision"?, "detail"?, "finishedAt"?}`.
    static func json(_ schedule: StoredSchedule) -> String {
        var body = JSONObjectWriter()
        body.string("id", schedule.id)
        body.string("environment", schedule.environment)
        body.string("at", RFC3339.string(microseconds: schedule.at))
        body.string("state", schedule.state.rawValue)
        body.string("createdBy", schedule.createdBy)
        body.string("createdAt", RFC3339.string(microseconds: schedule.createdAt))
        body.raw("late", schedule.late ? "true" : "false")
        if let revision = schedule.revision { body.integer("revision", revision) }
        if let detail = schedule.detail { body.string("detail", detail) }
        if let finishedAt = schedule.finishedAt { body.string("finishedAt", RFC3339.string(microseconds: finishedAt)) }
        // The work's members as stored (`ScheduleWork.json`: one object the server wrote), in place.
        let work = schedule.body.hasPrefix("{") && schedule.body.hasSuffix("}") ? String(schedule.body.dropFirst().dropLast()) : ""
        let head = body.json
        return work.isEmpty ? head : String(head.dropLast()) + "," + work + "}"
    }

    /// A new id: 16 lowercase hex digits.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt32, radix: 16)
            return String(repeating: "0", count: 8 - hex.count) + hex
        }.joined()
    }

    /// The cursor of a page that ends at `schedule`: `<at in microseconds>-<id>`.
    static func cursor(_ schedule: StoredSchedule) -> String { "\(schedule.at)-\(schedule.id)" }

    /// Reads what ``cursor(_:)`` wrote (nil: not a cursor).
    static func cursor(_ text: String) -> ScheduleCursor? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].utf8.count <= 18, parts[0].utf8.allSatisfy({ (48...57).contains($0) }),
              let at = Int64(parts[0]), isID(String(parts[1])) else { return nil }
        return ScheduleCursor(at: at, id: String(parts[1]))
    }

    static func isID(_ text: String) -> Bool {
        text.utf8.count == 16 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}
