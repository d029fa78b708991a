// The OpenFeature (OFREP 0.3.0) part of the served contract: paths, schemas, the X-API-Key scheme.

extension OpenAPIContract {

    /// Reads that also take OFREP's `X-API-Key`.
    private static var ofrepSecurity: YAMLNode {
        securityAnyOf("readToken", "apiToken", "ofrepApiKey")
    }

    private static func json(_ schemaRef: String, description: String, headers: [(String, YAMLNode)] = []) -> YAMLNode {
        jsonResponse(description, schema: .ref("#/components/schemas/" + schemaRef), headers: headers)
    }

    private static var evaluationBody: YAMLNode {
        .map([
            ("required", .boolean(true)),
            ("content", .map([("application/json", .map([
                ("schema", .ref("#/components/schemas/OFREPEvaluationRequest")),
                ("example", .map([("context", .map([("targetingKey", .string("user-123"))]))])),
            ]))])),
        ])
    }

    /// `/ofrep/v1/evaluate/flags/{key}`
    static func pathOFREPFlag(_ all: PreferencesContract) -> YAMLNode {
        .map([("post", .map([
            ("tags", .strings(["openfeature"])),
            ("operationId", .string("evaluateFlag")),
            ("summary", .string("Evaluate one preference as an OpenFeature flag.")),
            ("description", .string("""
                `reason` is always `STATIC` (preferences are settings, not targeted flags); `variant` is
                `default` while the value is the declared default, else `set`. The value keeps its declared
                type: an `integer` is written without a fraction (`5`), a `number` always with one (`2.0`).
                The evaluation context is accepted and does not change the value; a missing `context` or
                `targetingKey` is not an error. A read although it is a POST: the read token is enough.
                """)),
            ("security", ofrepSecurity),
            ("parameters", .sequence([.map([
                ("name", .string("key")), ("in", .string("path")), ("required", .boolean(true)),
                ("description", .string("A declared preference key; any other → `404` `FLAG_NOT_FOUND`.")),
                ("schema", .map([("type", .string("string")), ("enum", .strings(all.keys))])),
            ])])),
            ("requestBody", evaluationBody),
            ("responses", .map([
                ("200", json("OFREPEvaluationSuccess", description: "The flag.")),
                ("400", json("OFREPEvaluationFailure", description: "The body is not an evaluation request (`PARSE_ERROR`).")),
                ("401", shared("Unauthorized")),
                ("404", json("OFREPFlagNotFound", description: "No such preference (`FLAG_NOT_FOUND`).")),
                ("413", shared("PayloadTooLarge")),
                ("415", shared("UnsupportedMediaType")),
                ("503", shared("ServiceUnavailable")),
            ])),
        ]))])
    }

    /// `/ofrep/v1/evaluate/flags`
    static func pathOFREPFlags() -> YAMLNode {
        let metadata: (String, String) -> YAMLNode = { name, description in
            .map([("name", .string(name)), ("in", .string("query")), ("required", .boolean(false)),
                  ("description", .string(description)), ("schema", .map([("type", .string("string"))]))])
        }
        return .map([("post", .map([
            ("tags", .strings(["openfeature"])),
            ("operationId", .string("evaluateFlags")),
            ("summary", .string("Evaluate every preference (bulk), with an ETag and the change stream.")),
            ("description", .string("""
                `flags` lists every declared preference in declaration order, each as `evaluateFlag`
                answers it; `eventStreams` names `GET /ofrep/v1/events`. `ETag` is the revision of the
                latest preference change (`"0"` when none was ever made): `If-None-Match` with it → `304`.
                """)),
            ("security", ofrepSecurity),
            ("parameters", .sequence([
                .ref("#/components/parameters/IfNoneMatch"),
                metadata("flagConfigEtag", "The `etag` of the notification that triggered this request (accepted, not needed)."),
                metadata("flagConfigLastModified", "The `lastModified` of that notification (accepted, not needed): Unix seconds or an RFC 3339 date-time, as OFREP declares it; anything else → `400` `PARSE_ERROR`.")
                    .setting("schema", .map([("oneOf", .sequence([
                        .map([("type", .string("integer")), ("minimum", .integer(0))]),
                        .map([("type", .string("string")), ("format", .string("date-time"))]),
                    ]))])),
            ])),
            ("requestBody", evaluationBody),
            ("responses", .map([
                ("200", json("OFREPBulkEvaluationSuccess", description: "Every flag.",
                             headers: [("ETag", .ref("#/components/headers/ETag"))])),
                ("304", shared("NotModified")),
                ("400", json("OFREPBulkEvaluationFailure", description: "The body is not an evaluation request, or `flagConfigLastModified` is malformed (`PARSE_ERROR`).")),
                ("401", shared("Unauthorized")),
                ("413", shared("PayloadTooLarge")),
                ("415", shared("UnsupportedMediaType")),
                ("503", shared("ServiceUnavailable")),
            ])),
        ]))])
    }

    /// `/ofrep/v1/events`
    static func pathOFREPEvents() -> YAMLNode {
        .map([("get", .map([
            ("tags", .strings(["openfeature", "streams"])),
            ("operationId", .string("streamFlagChanges")),
            ("summary", .string("OFREP change notifications: one `refetchEvaluation` per preference change.")),
            ("description", .string("""
                After every preference change: `id:` its revision, `event: message`, `data:`
                `{"type":"refetchEvaluation","etag":"\\"<revision>\\"","lastModified":<unix seconds>}` (`etag`
                equals the bulk evaluation's `ETag` after that change). No snapshot on connect (a provider
                fetches the bulk evaluation itself). `Last-Event-ID` / `lastEventId` replays the changes
                after it like every other stream; when they are no longer retained, one notification with
                the current revision is sent instead. Heartbeats, limits and tickets as for every stream.
                """)),
            ("security", securityAnyOf("readToken", "apiToken", "ofrepApiKey", "streamTicket")),
            ("parameters", .sequence([
                .ref("#/components/parameters/LastEventIdQuery"),
                .ref("#/components/parameters/LastEventIdHeader"),
            ])),
            ("responses", .map([
                ("200", .map([
                    ("description", .string("The notification stream (it does not end by itself).")),
                    ("headers", .map([
                        revisionHeader,
                        ("Cache-Control", .map([("required", .boolean(true)),
                                                ("schema", .map([("type", .string("string")), ("const", .string("no-cache, no-transform"))]))])),
                    ])),
                    ("content", .map([("text/event-stream", .map([
                        ("schema", .ref("#/components/schemas/OFREPStreamEvent")),
                        ("example", .string("retry: 3000\n\nid: 7\nevent: message\ndata: {\"type\":\"refetchEvaluation\",\"etag\":\"\\\"7\\\"\",\"lastModified\":1771622898}\n\n")),
                    ]))])),
                ])),
                ("400", shared("BadRequest")),
                ("401", shared("Unauthorized")),
            ])),
        ]))])
    }

    /// The OFREP schemas, by name.
    static func ofrepSchemas() -> [(String, YAMLNode)] {
        let string: YAMLNode = .map([("type", .string("string"))])
        let evaluation: YAMLNode = .map([
            ("type", .string("object")),
            ("description", .string("A preference as an OpenFeature flag evaluation.")),
            ("required", .strings(["key", "value", "reason", "variant", "metadata"])),
            ("properties", .map([
                ("key", string),
                ("value", .ref("#/components/schemas/PreferenceValue")),
                ("reason", .map([("type", .string("string")), ("const", .string("STATIC"))])),
                ("variant", .map([("type", .string("string")), ("enum", .strings(["default", "set"]))])),
                ("metadata", .map([
                    ("type", .string("object")),
                    ("required", .strings(["revision", "type"])),
                    ("properties", .map([
                        ("revision", .map([("type", .string("integer")), ("minimum", .integer(0))])),
                        ("type", .ref("#/components/schemas/PreferenceType")),
                    ])),
                ])),
            ])),
        ])
        func failure(_ codes: [String], key: Bool) -> YAMLNode {
            .map([
                ("type", .string("object")),
                ("required", .strings((key ? ["key"] : []) + ["errorCode", "errorDetails"])),
                ("properties", .map((key ? [("key", string)] : []) + [
                    ("errorCode", .map([("type", .string("string")), ("enum", .strings(codes))])),
                    ("errorDetails", string),
                ])),
            ])
        }
        return [
            ("OFREPEvaluationRequest", .map([
                ("type", .string("object")),
                ("description", .string("An OFREP evaluation request; the context is accepted and ignored.")),
                ("properties", .map([("context", .map([
                    ("type", .string("object")),
                    ("properties", .map([("targetingKey", string)])),
                    ("additionalProperties", .boolean(true)),
                ]))])),
            ])),
            ("OFREPEvaluationSuccess", evaluation),
            ("OFREPEvaluationFailure", failure(["PARSE_ERROR"], key: true)),
            ("OFREPFlagNotFound", failure(["FLAG_NOT_FOUND"], key: true)),
            ("OFREPBulkEvaluationFailure", failure(["PARSE_ERROR"], key: false)),
            ("OFREPBulkEvaluationSuccess", .map([
                ("type", .string("object")),
                ("required", .strings(["flags", "eventStreams"])),
                ("properties", .map([
                    ("flags", .map([("type", .string("array")), ("items", .ref("#/components/schemas/OFREPEvaluationSuccess"))])),
                    ("eventStreams", .map([("type", .string("array")), ("items", .map([
                        ("type", .string("object")),
                        ("required", .strings(["type", "endpoint"])),
                        ("properties", .map([
                            ("type", .map([("type", .string("string")), ("const", .string("sse"))])),
                            ("endpoint", .map([
                                ("type", .string("object")),
                                ("required", .strings(["requestUri"])),
                                ("properties", .map([("requestUri", .map([("type", .string("string")), ("const", .string(OFREPRoutes.eventsPath))]))])),
                            ])),
                            ("inactivityDelaySec", .map([("type", .string("integer")), ("minimum", .integer(1))])),
                        ])),
                    ]))])),
                ])),
            ])),
            ("OFREPNotification", .map([
                ("type", .string("object")),
                ("description", .string("`data` of an OFREP notification.")),
                ("required", .strings(["type", "etag", "lastModified"])),
                ("properties", .map([
                    ("type", .map([("type", .string("string")), ("const", .string("refetchEvaluation"))])),
                    ("etag", .map([("type", .string("string")), ("pattern", .string("^\"[0-9]{1,20}\"$"))])),
                    ("lastModified", .map([("type", .string("integer")), ("minimum", .integer(0))])),
                ])),
            ])),
            ("OFREPStreamEvent", .map([
                ("type", .string("object")),
                ("description", .string("One event of `GET /ofrep/v1/events` as a client's SSE parser delivers it.")),
                ("required", .strings(["event", "data", "id"])),
                ("properties", .map([
                    ("id", .map([("type", .string("string")), ("pattern", .string("^[0-9]{1,20}$"))])),
                    ("event", .map([("type", .string("string")), ("const", .string("message"))])),
                    ("data", .map([("type", .string("string")), ("contentMediaType", .string("application/json")),
                                   ("contentSchema", .ref("#/components/schemas/OFREPNotification"))])),
                    ("retry", .map([("type", .string("integer")), ("minimum", .integer(0))])),
                ])),
            ])),
        ]
    }

    /// `/preferences/schema`
    static func pathPreferenceSchema(_ all: PreferencesContract) -> YAMLNode {
        .map([("get", .map([
            ("tags", .strings(["preferences"])),
            ("operationId", .string("getPreferenceSchema")),
            ("summary", .string("The declarations, in the `--preferences` file format (also for the built-in set).")),
            ("responses", .map([
                ("200", .map([
                    ("description", .string("Every key with its type, default and constraints; fixed while the server runs.")),
                    ("headers", .map([revisionHeader])),
                    ("content", .map([("application/json", .map([
                        ("schema", .ref("#/components/schemas/PreferenceDeclarations")),
                        ("example", all.declarationsExample),
                    ]))])),
                ])),
                ("401", shared("Unauthorized")),
                ("503", shared("ServiceUnavailable")),
            ])),
        ]))])
    }

    /// `components.schemas.PreferenceDeclaration`: one entry of the `--preferences` format.
    static func schemaPreferenceDeclaration() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["type", "default"])),
            ("additionalProperties", .boolean(false)),
            ("properties", .map([
                ("type", .ref("#/components/schemas/PreferenceType")),
                ("default", .ref("#/components/schemas/PreferenceValue")),
                ("description", .map([("type", .string("string"))])),
                ("minimum", .map([("type", .string("number"))])),
                ("maximum", .map([("type", .string("number"))])),
                ("maxLength", .map([("type", .string("integer")), ("minimum", .integer(0))])),
                ("enum", .map([("type", .string("array")), ("minItems", .integer(1)),
                               ("items", .ref("#/components/schemas/PreferenceValue"))])),
            ])),
        ])
    }

    /// `components.securitySchemes.ofrepApiKey`
    static func ofrepApiKeyScheme() -> YAMLNode {
        .map([
            ("type", .string("apiKey")),
            ("in", .string("header")),
            ("name", .string("X-API-Key")),
            ("description", .string("OFREP's API-key header: the read or api token, as an alternative to `Authorization: Bearer`.")),
        ])
    }
}
