// The streams paths of the served contract.

extension OpenAPIContract {
    /// `/events`
    static func pathEvents() -> YAMLNode {
        streamOperation(
            tags: ["streams"],
            operationId: "streamEvents",
            summary: "One multiplexed stream for everything (browsers allow 6 connections per origin).",
            description: #"""
                `topics` selects any of `preferences`, `things`, `posts` (default: all three); `keys` narrows
                the `preferences` topic (default: every key) and does not affect the others. A malformed
                `topics` (an unknown topic) → `400`; an unknown key in `keys` → `422`. `topics=history`
                (alone) is the audit stream: every change record as `event: change` (`ChangeEvent`), `id:`
                its revision, no snapshot; `Last-Event-ID` resumes it as far back as the history reaches
                (past it: `reset`).

                """#,
            parameters: [
                .map([
                    ("name", .string("topics")),
                    ("in", .string("query")),
                    ("required", .boolean(false)),
                    ("description", .string("Comma-separated topics, e.g. `preferences,things`.")),
                    ("schema", .map([
                        ("type", .string("string")),
                        ("pattern", .string("^(history|(preferences|things|posts)(,(preferences|things|posts))*)$")),
                    ])),
                ]),
                .ref("#/components/parameters/StreamKeys"),
            ],
            responses: [("422", shared("UnprocessableContent"))]
        )
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
                ("security", securityAnyOf("readToken", "apiToken")),
                ("responses", .map([
                    ("201", .map([
                        ("description", .string("A fresh ticket.")),
                        ("headers", .map([
                            revisionHeader,
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
                    ("401", shared("Unauthorized")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }
}
