// The pieces that the path builders (OpenAPIPaths+*.swift) would otherwise spell out again and
// again: a JSON response, a shared response, a security requirement, an event-stream operation.

extension OpenAPIContract {
    /// The `Tidings-Revision` header that every answer carries.
    static let revisionHeader: (String, YAMLNode) = ("Tidings-Revision", .ref("#/components/headers/TidingsRevision"))

    /// A response of `components/responses` (`401` → `Unauthorized`, ...).
    static func shared(_ name: String) -> YAMLNode { .ref("#/components/responses/" + name) }

    /// A JSON response with the `Tidings-Revision` header (then `headers`), its schema, an
    /// optional example and optional links, in that order.
    static func jsonResponse(
        _ description: String, schema: YAMLNode, example: YAMLNode? = nil,
        headers: [(String, YAMLNode)] = [], links: YAMLNode? = nil
    ) -> YAMLNode {
        response(description, mediaType: "application/json", schema: schema, example: example,
                 headers: headers, links: links)
    }

    /// An RFC 9457 problem response (`application/problem+json`, schema `Problem`).
    static func problemResponse(_ description: String, headers: [(String, YAMLNode)] = []) -> YAMLNode {
        response(description, mediaType: "application/problem+json", schema: .ref("#/components/schemas/Problem"),
                 headers: headers)
    }

    static func response(
        _ description: String, mediaType: String, schema: YAMLNode, example: YAMLNode? = nil,
        headers: [(String, YAMLNode)], links: YAMLNode? = nil
    ) -> YAMLNode {
        var media: [(String, YAMLNode)] = [("schema", schema)]
        if let example { media.append(("example", example)) }
        var members: [(String, YAMLNode)] = [
            ("description", .string(description)),
            ("headers", .map([revisionHeader] + headers)),
            ("content", .map([(mediaType, .map(media))])),
        ]
        if let links { members.append(("links", links)) }
        return .map(members)
    }

    /// A security requirement met by any one of `schemes` (each without scopes).
    static func securityAnyOf(_ schemes: String...) -> YAMLNode {
        .sequence(schemes.map { .map([($0, .strings([]))]) })
    }

    /// A `GET` that opens an event stream: `parameters` and then the resume and conflation ones;
    /// `200` is `stream`, `400` and `401` are shared, then `responses`.
    static func streamOperation(
        tags: [String], operationId: String, summary: String, description: String,
        parameters: [YAMLNode] = [], stream: YAMLNode = shared("EventStream"),
        responses: [(String, YAMLNode)] = []
    ) -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(tags)),
                ("operationId", .string(operationId)),
                ("summary", .string(summary)),
                ("description", .string(description)),
                ("security", streamSecurity),
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
