// The streams paths of the served contract.

extension OpenAPIContract {
    /// `/events`
    static func pathEvents() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["streams"])),
                ("operationId", .string("streamEvents")),
                ("summary", .string("One multiplexed stream for everything (browsers allow 6 connections per origin).")),
                ("description", .string(#"""
                    `topics` selects any of `preferences`, `things`, `posts` (default: all three); `keys` narrows
                    the `preferences` topic (default: every key) and does not affect the others. A malformed
                    `topics` (an unknown topic) → `400`; an unknown key in `keys` → `422`.

                    """#)),
                ("security", streamSecurity),
                ("parameters", .sequence([
                    .map([
                        ("name", .string("topics")),
                        ("in", .string("query")),
                        ("required", .boolean(false)),
                        ("description", .string("Comma-separated topics, e.g. `preferences,things`.")),
                        ("schema", .map([
                            ("type", .string("string")),
                            ("pattern", .string("^(preferences|things|posts)(,(preferences|things|posts))*$")),
                        ])),
                    ]),
                    .ref("#/components/parameters/StreamKeys"),
                    .ref("#/components/parameters/LastEventIdQuery"),
                    .ref("#/components/parameters/LastEventIdHeader"),
                    .ref("#/components/parameters/Conflate"),
                ])),
                ("responses", .map([
                    ("200", .ref("#/components/responses/EventStream")),
                    ("400", .ref("#/components/responses/BadRequest")),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("422", .ref("#/components/responses/UnprocessableContent")),
                ])),
            ])),
        ])
    }

    /// `/stream-tickets`
    static func pathStreamTickets() -> YAMLNode {
        .map([
            ("post", .map([
                ("tags", .strings(["access"])),
                ("operationId", .string("createStreamTicket")),
                ("summary", .string("A single-use ticket for opening one event stream within 60 seconds.")),
                ("description", .string(#"""
                    No request body. Authorised like a read (`Bearer R` or `Bearer T` when `--read-token` is set),
                    because a ticket grants reading only. The ticket is good for one event-stream request,
                    passed as `?ticket=`; using it consumes it.

                    """#)),
                ("security", .sequence([
                    .map([
                        ("readToken", .strings([])),
                    ]),
                    .map([
                        ("apiToken", .strings([])),
                    ]),
                ])),
                ("responses", .map([
                    ("201", .map([
                        ("description", .string("A fresh ticket.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                            ("Cache-Control", .map([
                                ("description", .string("`no-store`: a ticket is a credential.")),
                                ("schema", .map([
                                    ("type", .string("string")),
                                ])),
                            ])),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref("#/components/schemas/Ticket")),
                                ("example", .map([
                                    ("ticket", .string("3q2-7wQ0Zy8mYlJ6m0l7xA")),
                                    ("expiresIn", .integer(60)),
                                ])),
                            ])),
                        ])),
                    ])),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
        ])
    }
}
