import EventHTTP
import HTTPTypes
import Observing

/// `GET /openapi.yaml`: the contract of this running server, generated once at start from its
/// preference declarations (see ``OpenAPIDocument``).
@MainActor
enum ContractRoute {
    static func register(preferences: TidingsPreferences, on router: any RouteRegistrar) {
        let yaml = Array(OpenAPIDocument.yaml(for: preferences.declarations).utf8)
        let document = Response(status: .ok, headers: [
            .contentType: "application/yaml",
            .cacheControl: "no-cache",
            // Strong, from the content: fixed for the process's lifetime.
            .eTag: ContentTag.of(yaml),
        ], body: yaml)
        router.get("/openapi.yaml") { _, responder in responder.send(document) }
    }
}
