// The pieces the per-key path builders (PreferencePaths.swift) would otherwise spell out again:
// a JSON response, a shared response, an event-stream operation.

extension OpenAPIContract {
    /// The `Tidings-Revision` header that every answer carries.
    static let revisionHeader: (String, YAMLNode) = ("Tidings-Revision", .ref("#/components/headers/TidingsRevision"))

    /// A response of `components/responses` (`401` → `Unauthorized`, ...).
    static func shared(_ name: String) -> YAMLNode { .ref("#/components/responses/" + name) }

    /// The shared responses of these status codes, in that order.
    static func shared(codes: String...) -> [(String, YAMLNode)] {
        let names = ["304": "NotModified", "400": "BadRequest", "401": "Unauthorized", "404": "NotFound",
                     "412": "PreconditionFailed", "413": "PayloadTooLarge", "415": "UnsupportedMediaType",
                     "422": "UnprocessableContent", "503": "ServiceUnavailable"]
        return codes.map { code in
            guard let name = names[code] else { preconditionFailure("no shared response for \(code)") }
            return (code, shared(name))
        }
    }

    /// A JSON response with the `Tidings-Revision` header (then `headers`), its schema and an
    /// optional example, in that order.
    static func jsonResponse(
        _ description: String, schema: YAMLNode, example: YAMLNode? = nil, headers: [(String, YAMLNode)] = []
    ) -> YAMLNode {
        var media: [(String, YAMLNode)] = [("schema", schema)]
        if let example { media.append(("example", example)) }
        return .map([
            ("description", .string(description)),
            ("headers", .map([revisionHeader] + headers)),
            ("content", .map([("application/json", .map(media))])),
        ])
    }

    /// A `GET` that opens an event stream (any of the read token, the API token or a stream
    /// ticket): `parameters` and then the resume and conflation ones; `200` is `stream`, `400`
    /// and `401` are shared, then `responses`.
    static func streamOperation(
        tags: [String], operationId: String, summary: String, description: String,
        parameters: [YAMLNode] = [], stream: YAMLNode, responses: [(String, YAMLNode)] = []
    ) -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(tags)),
                ("operationId", .string(operationId)),
                ("summary", .string(summary)),
                ("description", .string(description)),
                ("security", .sequence(["readToken", "apiToken", "streamTicket"].map { .map([($0, .strings([]))]) })),
                ("parameters", .sequence(parameters + [
                    .ref("#/components/parameters/LastEventIdQuery"),
                    .ref("#/components/parameters/LastEventIdHeader"),
                    .ref("#/components/parameters/Conflate"),
                ])),
                ("responses", .map([
                    ("200", stream),
                    ("400", shared("BadRequest")),
                    ("401", shared("Unauthorized")),
                ] + responses)),
            ])),
        ])
    }
}
