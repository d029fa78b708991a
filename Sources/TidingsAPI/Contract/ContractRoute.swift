import EventHTTP
import HTTPTypes
import Observing

/// `GET /openapi.yaml`: the contract of this running server, generated once at start from its
/// preference declarations (see ``OpenAPIDocument``).
@MainActor
enum ContractRoute {
    static func register(preferences: Preferences, on router: RouteGroup) {
        let document = Response(status: .ok, headers: [
            .contentType: "application/yaml",
            .cacheControl: "no-cache",
        ], body: Array(OpenAPIDocument.yaml(for: preferences.declarations).utf8))
        router.get("/openapi.yaml") { _, responder in responder.send(document) }
    }
}
