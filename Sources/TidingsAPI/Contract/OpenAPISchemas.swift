// The schemas of the served contract.

extension OpenAPIContract {
    /// `components.schemas.Problem`
    static func schemaProblem() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("description", .string("RFC 9457 problem details. Never a stack trace.")),
            ("required", .strings(["type", "title", "status", "detail"])),
            ("properties", .map([
                ("type", .map([
                    ("type", .string("string")),
                    ("format", .string("uri-reference")),
                    ("description", .string("`about:blank`, or a `urn:tidings:problem:<slug>` naming the kind of problem.")),
                    ("examples", .strings(["about:blank", "urn:tidings:problem:validation"])),
                ])),
                ("title", .map([
                    ("type", .string("string")),
                    ("description", .string("Short, stable summary of the problem type.")),
                ])),
                ("status", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(400)),
                    ("maximum", .integer(599)),
                    ("description", .string("The HTTP status.")),
                ])),
                ("detail", .map([
                    ("type", .string("string")),
                    ("description", .string("What went wrong with this request, for a person.")),
                ])),
                ("instance", .map([
                    ("type", .string("string")),
                    ("format", .string("uri-reference")),
                ])),
                ("errors", .map([
                    ("type", .string("array")),
                    ("description", .string("For validation of several members (422), one entry per bad member.")),
                    ("items", .map([
                        ("type", .string("object")),
                        ("required", .strings(["key", "detail"])),
                        ("properties", .map([
                            ("key", .map([
                                ("type", .string("string")),
                                ("description", .string("The preference key, or the member as a JSON-pointer-like path (`value`, `thing`, `things/3`).")),
                            ])),
                            ("detail", .map([
                                ("type", .string("string")),
                            ])),
                        ])),
                    ])),
                ])),
            ])),
            ("examples", .sequence([
                .map([
                    ("type", .string("urn:tidings:problem:validation")),
                    ("title", .string("Invalid value")),
                    ("status", .integer(422)),
                    ("detail", .string("age: expected integer, got 1.5")),
                    ("errors", .sequence([
                        .map([
                            ("key", .string("age")),
                            ("detail", .string("expected integer, got 1.5")),
                        ]),
                    ])),
                ]),
            ])),
        ])
    }

    /// `components.schemas.Health`
    static func schemaHealth() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["status"])),
            ("properties", .map([
                ("status", .map([
                    ("type", .string("string")),
                    ("enum", .strings(["ok", "ready"])),
                ])),
            ])),
        ])
    }

    /// `components.schemas.PreferenceType`
    static func schemaPreferenceType() -> YAMLNode {
        .map([
            ("type", .string("string")),
            ("enum", .strings(["boolean", "integer", "number", "string"])),
        ])
    }

    /// `components.schemas.PreferenceValue`
    static func schemaPreferenceValue() -> YAMLNode {
        .map([
            ("description", .string(#"""
                A preference value: boolean, integer (signed 64-bit), number (finite double) or string, as
                the key's declared type says. (Written as `anyOf`, not `oneOf`: a JSON integer is also a
                number, so `oneOf` would refuse every integer.)

                """#)),
            ("anyOf", .sequence([
                .map([
                    ("type", .string("boolean")),
                ]),
                .map([
                    ("type", .string("integer")),
                ]),
                .map([
                    ("type", .string("number")),
                ]),
                .map([
                    ("type", .string("string")),
                ]),
            ])),
        ])
    }

    /// `components.schemas.PreferenceRecord`
    static func schemaPreferenceRecord() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["key", "value", "default", "type", "revision"])),
            ("properties", .map([
                ("key", .map([
                    ("type", .string("string")),
                ])),
                ("value", .ref("#/components/schemas/PreferenceValue")),
                ("default", .ref("#/components/schemas/PreferenceValue")),
                ("type", .ref("#/components/schemas/PreferenceType")),
                ("revision", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(0)),
                    ("description", .string("Revision of the last change to this key; 0 when never set.")),
                ])),
                ("description", .map([
                    ("type", .string("string")),
                    ("description", .string("From a `--preferences` file, when given.")),
                ])),
            ])),
        ])
    }

    /// `components.schemas.PreferenceWrite`
    static func schemaPreferenceWrite() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["value"])),
            ("properties", .map([
                ("value", .ref("#/components/schemas/PreferenceValue")),
            ])),
        ])
    }

    /// `components.schemas.ThingText`
    static func schemaThingText() -> YAMLNode {
        .map([
            ("type", .string("string")),
            ("description", .string(#"""
                A thing as sent. The server normalises it: trim Unicode white space and newlines at both
                ends (Swift `CharacterSet.whitespacesAndNewlines`), then with `--text-case upper` (default)
                upper-case it, Unicode-aware and locale-independent (Swift `uppercased()`; `ß` → `SS`),
                then bring it to Unicode NFC. The result must be 1..64 Unicode scalars (length counted after
                upper-casing and NFC, the way JSON Schema counts, so combining marks count), contain no control character (general category Cc: U+0000–U+001F,
                U+007F–U+009F), hold at most 30 combining marks in a row (Unicode's stream-safe format), and
                not be exactly `events`; otherwise `422`. Text over 4 KiB is refused before it is normalised. The pattern below states the
                same rule before upper-casing (surrounding white space is allowed and does not count), so a
                text that matches it can still be refused when upper-casing makes it longer.

                """#)),
            ("pattern", .string(#"^\s*[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]{0,62}[^\s\x00-\x1f\x7f-\x9f])?\s*$"#)),
            ("examples", .strings(["yolo", " btw ", "IMHO"])),
        ])
    }

    /// `components.schemas.ThingName`
    static func schemaThingName() -> YAMLNode {
        .map([
            ("type", .string("string")),
            ("description", .string("A normalised thing.")),
            ("minLength", .integer(1)),
            ("maxLength", .integer(64)),
        ])
    }

    /// `components.schemas.ThingWrite`
    static func schemaThingWrite() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["thing"])),
            ("properties", .map([
                ("thing", .ref("#/components/schemas/ThingText")),
            ])),
        ])
    }

    /// `components.schemas.ThingListWrite`
    static func schemaThingListWrite() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["things"])),
            ("properties", .map([
                ("things", .map([
                    ("type", .string("array")),
                    ("maxItems", .integer(10000)),
                    ("uniqueItems", .boolean(true)),
                    ("items", .ref("#/components/schemas/ThingText")),
                ])),
            ])),
        ])
    }

    /// `components.schemas.Thing`
    static func schemaThing() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["thing"])),
            ("properties", .map([
                ("thing", .ref("#/components/schemas/ThingName")),
                ("revision", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(1)),
                    ("description", .string("The list's revision after the change (in write answers).")),
                ])),
            ])),
        ])
    }

    /// `components.schemas.ThingList`
    static func schemaThingList() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["things", "revision"])),
            ("properties", .map([
                ("things", .map([
                    ("type", .string("array")),
                    ("maxItems", .integer(10000)),
                    ("items", .ref("#/components/schemas/ThingName")),
                ])),
                ("revision", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(0)),
                    ("description", .string("Revision of the list's last change; 0 when never changed.")),
                ])),
            ])),
        ])
    }

    /// `components.schemas.Post`
    static func schemaPost() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("description", .string("A post as the upstream sent it; members beyond these are kept as they are.")),
            ("required", .strings(["id", "title", "body"])),
            ("additionalProperties", .boolean(true)),
            ("properties", .map([
                ("id", .map([
                    ("oneOf", .sequence([
                        .map([
                            ("type", .string("integer")),
                        ]),
                        .map([
                            ("type", .string("string")),
                        ]),
                    ])),
                ])),
                ("title", .map([
                    ("type", .string("string")),
                ])),
                ("body", .map([
                    ("type", .string("string")),
                ])),
                ("userId", .map([
                    ("type", .string("integer")),
                ])),
            ])),
        ])
    }

    /// `components.schemas.PostsError`
    static func schemaPostsError() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["message"])),
            ("properties", .map([
                ("message", .map([
                    ("type", .string("string")),
                    ("description", .string("Which failure: connection error, timeout, upstream status, body over 8 MiB (reading stops there), a refused answer (a `Content-Encoding` other than identity, a redirect to another scheme, host or port or more than 8 redirects, a head over 64 KiB), or not a JSON array of posts.")),
                ])),
                ("upstreamStatus", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(100)),
                    ("maximum", .integer(599)),
                ])),
            ])),
        ])
    }

    /// `components.schemas.PostsState`
    static func schemaPostsState() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["state", "posts", "fetchedAt", "error", "source"])),
            ("properties", .map([
                ("state", .map([
                    ("type", .string("string")),
                    ("enum", .strings(["idle", "loading", "loaded", "failed"])),
                    ("description", .string("`failed` keeps the last good posts (still served); retries back off exponentially up to 60 s.")),
                ])),
                ("posts", .map([
                    ("type", .string("array")),
                    ("items", .ref("#/components/schemas/Post")),
                ])),
                ("fetchedAt", .map([
                    ("description", .string("When the posts were last fetched successfully (RFC 3339), or null.")),
                    ("oneOf", .sequence([
                        .map([
                            ("type", .string("string")),
                            ("format", .string("date-time")),
                        ]),
                        .map([
                            ("type", .string("null")),
                        ]),
                    ])),
                ])),
                ("error", .map([
                    ("description", .string("The last load's failure while `failed`, else null.")),
                    ("oneOf", .sequence([
                        .ref("#/components/schemas/PostsError"),
                        .map([
                            ("type", .string("null")),
                        ]),
                    ])),
                ])),
                ("source", .map([
                    ("type", .string("string")),
                    ("format", .string("uri")),
                    ("description", .string("The feed URL.")),
                ])),
            ])),
        ])
    }

    /// `components.schemas.CancelResult`
    static func schemaCancelResult() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["cancelled"])),
            ("properties", .map([
                ("cancelled", .map([
                    ("type", .string("boolean")),
                ])),
            ])),
        ])
    }

    /// `components.schemas.Ticket`
    static func schemaTicket() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("required", .strings(["ticket", "expiresIn"])),
            ("properties", .map([
                ("ticket", .map([
                    ("type", .string("string")),
                    ("pattern", .string("^[A-Za-z0-9_-]{22,128}$")),
                    ("description", .string("At least 128 random bits, base64url without padding.")),
                ])),
                ("expiresIn", .map([
                    ("type", .string("integer")),
                    ("const", .integer(60)),
                    ("description", .string("Seconds the ticket stays valid.")),
                ])),
            ])),
        ])
    }

    /// `components.schemas.PreferenceEvent`
    static func schemaPreferenceEvent() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("description", .string("`data` of a `preference` event.")),
            ("required", .strings(["key", "value", "revision"])),
            ("properties", .map([
                ("key", .map([
                    ("type", .string("string")),
                ])),
                ("value", .ref("#/components/schemas/PreferenceValue")),
                ("revision", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(0)),
                ])),
            ])),
        ])
    }

    /// `components.schemas.ThingsEvent`
    static func schemaThingsEvent() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("description", .string("`data` of a `things` event. A snapshot has no `change`.")),
            ("required", .strings(["things", "revision"])),
            ("properties", .map([
                ("things", .map([
                    ("type", .string("array")),
                    ("items", .ref("#/components/schemas/ThingName")),
                ])),
                ("revision", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(0)),
                ])),
                ("change", .map([
                    ("type", .string("object")),
                    ("required", .strings(["op"])),
                    ("properties", .map([
                        ("op", .map([
                            ("type", .string("string")),
                            ("enum", .strings(["add", "remove", "replace"])),
                        ])),
                        ("thing", .ref("#/components/schemas/ThingName")),
                    ])),
                ])),
            ])),
        ])
    }

    /// `components.schemas.ResetEvent`
    static func schemaResetEvent() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("description", .string("`data` of a `reset` event: the resume point could not be honoured; a fresh snapshot follows.")),
            ("required", .strings(["reason"])),
            ("properties", .map([
                ("reason", .map([
                    ("type", .string("string")),
                    ("examples", .strings(["lastEventId older than the replay buffer"])),
                ])),
            ])),
        ])
    }

    /// `components.schemas.StreamEvent`
    static func schemaStreamEvent() -> YAMLNode {
        .map([
            ("type", .string("object")),
            ("description", .string(#"""
                One event of a `text/event-stream` response, as a client's SSE parser delivers it (`retry:`
                lines and `:` comments are not events). `data` is one line of JSON whose schema depends on
                `event` (given as `contentSchema`).

                """#)),
            ("required", .strings(["event", "data", "id"])),
            ("properties", .map([
                ("id", .map([
                    ("type", .string("string")),
                    ("pattern", .string("^[0-9]{1,20}$")),
                    ("description", .string("The revision.")),
                ])),
                ("event", .map([
                    ("type", .string("string")),
                    ("enum", .strings(["preference", "things", "posts", "reset", "change"])),
                ])),
                ("data", .map([
                    ("type", .string("string")),
                    ("contentMediaType", .string("application/json")),
                ])),
                ("retry", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(0)),
                ])),
            ])),
            ("oneOf", .sequence([
                .map([
                    ("properties", .map([
                        ("event", .map([
                            ("const", .string("preference")),
                        ])),
                        ("data", .map([
                            ("contentSchema", .ref("#/components/schemas/PreferenceEvent")),
                        ])),
                    ])),
                ]),
                .map([
                    ("properties", .map([
                        ("event", .map([
                            ("const", .string("things")),
                        ])),
                        ("data", .map([
                            ("contentSchema", .ref("#/components/schemas/ThingsEvent")),
                        ])),
                    ])),
                ]),
                .map([
                    ("properties", .map([
                        ("event", .map([
                            ("const", .string("posts")),
                        ])),
                        ("data", .map([
                            ("contentSchema", .ref("#/components/schemas/PostsState")),
                        ])),
                    ])),
                ]),
                .map([
                    ("properties", .map([
                        ("event", .map([
                            ("const", .string("reset")),
                        ])),
                        ("data", .map([
                            ("contentSchema", .ref("#/components/schemas/ResetEvent")),
                        ])),
                    ])),
                ]),
                .map([
                    ("properties", .map([
                        ("event", .map([
                            ("const", .string("change")),
                        ])),
                        ("data", .map([
                            ("contentSchema", .ref("#/components/schemas/ChangeEvent")),
                        ])),
                    ])),
                ]),
            ])),
        ])
    }
}
