import EventHTTP

/// `GET /openapi.yaml`: the machine-readable contract, compiled into the binary.
enum ContractRoute {
    private static let document = Response(status: 200, headers: [
        "Content-Type": "application/yaml",
        "Cache-Control": "no-cache",
    ], body: Array(OpenAPIDocument.yaml.utf8))

    static func register(on router: Router) {
        router.get("/openapi.yaml") { _, responder in responder.send(document) }
    }
}
