import Foundation
import EventHTTP
import Observing

/// The event-stream endpoints of openapi.yaml: per resource, per key, and the multiplexed `/events`
/// that lets a browser carry everything on one connection.
@MainActor
struct StreamRoutes {
    let state: TidingsState
    let hub: StreamHub

    func register(on router: any RouteRegistrar) {
        router.get("/preferences/events") { request, responder in
            let keys = try preferenceKeys(request.query("keys"))
            try open(request, responder, coverage: StreamCoverage(preferenceKeys: keys))
        }
        router.get("/preferences/{key}/events") { request, responder in
            let key = request.parameters["key"] ?? ""
            guard state.preferences.declaration(forKey: key) != nil else { throw Problems.unknownPreference(key) }
            try open(request, responder, coverage: StreamCoverage(preferenceKeys: [key]))
        }
        router.get("/things/events") { request, responder in
            try open(request, responder, coverage: StreamCoverage(things: true))
        }
        router.get("/posts/events") { request, responder in
            try open(request, responder, coverage: StreamCoverage(posts: true))
        }
        router.get("/events") { request, responder in
            try open(request, responder, coverage: try multiplexedCoverage(request))
        }
    }

    /// `?conflate=true`: the stream conflates instead of being cut off (openapi.yaml), then the hub.
    private func open(_ request: Request, _ responder: Responder, coverage: StreamCoverage) throws(ProblemDetails) {
        if try EventConflation.requested(request) { responder.conflateEventStream(keyedBy: EventConflation.key(of:)) }
        try hub.open(request, responder: responder, coverage: coverage)
    }

    /// `topics=preferences,things,posts` (default: all) and `keys=` for the preferences topic.
    private func multiplexedCoverage(_ request: Request) throws(ProblemDetails) -> StreamCoverage {
        var topics: Set<String> = ["preferences", "things", "posts"]
        if let raw = request.query("topics") {
            let named = list(raw)
            // A name longer than every topic is unknown without hashing it (hashing a long run
            // of combining marks is quadratic).
            if let long = named.first(where: { $0.utf8.count > "preferences".utf8.count }) {
                throw Problems.badQuery("Unknown topic '\(long.prefix(64))'; topics are preferences, things and posts.")
            }
            topics = Set(named)
            let unknown = topics.subtracting(["preferences", "things", "posts", "history"]).sorted()
            guard unknown.isEmpty, !topics.isEmpty else {
                throw Problems.badQuery(topics.isEmpty
                    ? "'topics' is empty; name one or more of preferences, things and posts (or history alone)."
                    : "Unknown topic '\(unknown[0])'; topics are preferences, things and posts, or history alone.")
            }
            // The audit stream: change records only (its events share revisions with the others').
            if topics.contains("history") {
                guard topics.count == 1 else {
                    throw Problems.badQuery("The history topic is a stream of its own: ask for topics=history alone.")
                }
                _ = try preferenceKeys(request.query("keys"))
                return StreamCoverage(history: true)
            }
        }
        var coverage = StreamCoverage(things: topics.contains("things"), posts: topics.contains("posts"))
        // `keys` narrows the preferences topic; without that topic it selects nothing.
        // `keys` is checked whatever the topics (a malformed or unknown key is an error the
        // client should hear of), but it narrows only the preferences topic.
        let keys = try preferenceKeys(request.query("keys"))
        if topics.contains("preferences") {
            coverage.preferenceKeys = keys
        }
        return coverage
    }

    /// The declared keys named in `keys` (comma-separated), in declaration order; all keys
    /// when absent; empty is a 400. An unknown key is a 422 that names it.
    private func preferenceKeys(_ raw: String?) throws(ProblemDetails) -> [String] {
        let declared = state.preferences.declarations.map(\.key)
        guard let raw else { return declared }
        let named = list(raw)
        // A key longer than every declared key is unknown without hashing it.
        if let unknown = named.first(where: { !state.preferences.mayBeKey($0) }) {
            throw Problems.invalid("There is no preference '\(unknown.prefix(64))'.", errors: [.init(key: String(unknown.prefix(64)), detail: "unknown preference")])
        }
        let wanted = Set(named)
        guard !wanted.isEmpty else { throw Problems.badQuery("'keys' is empty; leave it out to cover every preference.") }
        if let unknown = wanted.subtracting(declared).sorted().first {
            throw Problems.invalid("There is no preference '\(unknown)'.", errors: [.init(key: unknown, detail: "unknown preference")])
        }
        return declared.filter(wanted.contains)
    }

    private func list(_ raw: String) -> [String] {
        raw.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
