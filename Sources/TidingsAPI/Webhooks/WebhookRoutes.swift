import EventHTTP
import Foundation
import HTTPTypes
import TidingsStore

/// `GET /webhooks` and `POST /webhooks/{name}/retry` (API.md "Changes as code, on a schedule,
/// and to webhooks"): each hook's `name`, `url` (without user information), `environments`, `state`,
/// `lastDelivered`, `backlog`, `lastError` and `nextAttempt` — never its secret — as the store
/// has them, so every instance answers the same.
@MainActor
struct WebhookRoutes {
    let webhooks: Webhooks

    func register(on routes: RouteGroup) {
        routes.get("/webhooks") { _, responder in
            Task { @MainActor in
                do {
                    let statuses = try await webhooks.statuses()
                    let json = #"{"webhooks":["# + statuses.map(Self.json).joined(separator: ",") + "]}"
                    responder.send(.json(bytes: Array(json.utf8), headers: [.cacheControl: "no-cache"]))
                } catch {
                    responder.send(Self.unavailable)
                }
            }
        }
        routes.post("/webhooks/{name}/retry") { request, responder in
            let name = request.parameters["name"] ?? ""
            guard webhooks.definitions.contains(where: { $0.name == name }) else {
                throw Problems.notFound("There is no webhook '\(name.prefix(64))'.")
            }
            Task { @MainActor in
                do {
                    guard let status = try await webhooks.retry(name) else {
                        responder.send(.problem(status: .notFound, detail: "There is no webhook '\(name.prefix(64))'."))
                        return
                    }
                    responder.send(.json(bytes: Array(Self.json(status).utf8), status: .accepted))
                } catch {
                    responder.send(Self.unavailable)
                }
            }
        }
    }

    private static let unavailable = Response.problem(
        status: .serviceUnavailable, detail: "The webhooks' state could not be read from the store right now. Try again.",
        headers: [.retryAfter: "1"])

    static func json(_ status: Webhooks.Status) -> String {
        var hook = JSONObjectWriter()
        hook.string("name", status.definition.name)
        hook.string("url", status.definition.displayURL)
        // The environments it covers (null: every one).
        hook.raw("environments", status.definition.environments.map { EventFrame.json($0) } ?? "null")
        hook.string("state", (status.row?.state ?? .active).rawValue)
        hook.raw("lastDelivered", status.row?.lastDelivered.map(String.init) ?? "null")
        hook.integer("backlog", UInt64(max(0, status.backlog)))
        hook.raw("lastError", status.row?.lastError.map { EventFrame.json($0) } ?? "null")
        hook.raw("nextAttempt", status.row?.nextAttempt.map { EventFrame.json(RFC3339.string(microseconds: $0 * 1000)) } ?? "null")
        return hook.json
    }
}
