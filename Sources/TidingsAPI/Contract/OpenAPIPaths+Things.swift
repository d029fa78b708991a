// The things paths of the served contract.

extension OpenAPIContract {
    /// `/things`
    static func pathThings() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["things"])),
                ("operationId", .string("listThings")),
                ("summary", .string("The list, in insertion order.")),
                ("parameters", .sequence([
                    .ref("#/components/parameters/IfNoneMatch"),
                ])),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("The list; `ETag` is the list's revision.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                            ("ETag", .ref("#/components/headers/ETag")),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref("#/components/schemas/ThingList")),
                                ("example", .map([
                                    ("things", .strings(["YOLO", "BTW"])),
                                    ("revision", .integer(12)),
                                ])),
                            ])),
                        ])),
                    ])),
                    ("304", .ref("#/components/responses/NotModified")),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
            ("post", .map([
                ("tags", .strings(["things"])),
                ("operationId", .string("addThing")),
                ("summary", .string("Append one thing.")),
                ("description", .string(#"""
                    The text is normalised (see `ThingText`), then: empty, longer than 64 Unicode scalars,
                    containing a control character, exactly `events` (that segment is the event stream; only
                    reachable with `--text-case none`), or the list already holding 10,000 things → `422`;
                    equal to an existing thing → `409`.

                    """#)),
                ("requestBody", .map([
                    ("required", .boolean(true)),
                    ("content", .map([
                        ("application/json", .map([
                            ("schema", .ref("#/components/schemas/ThingWrite")),
                            ("example", .map([
                                ("thing", .string("yolo")),
                            ])),
                        ])),
                    ])),
                ])),
                ("security", .sequence([
                    .map([
                        ("apiToken", .strings([])),
                    ]),
                ])),
                ("responses", .map([
                    ("201", .map([
                        ("description", .string("Appended; the normalised thing and the list's new revision.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                            ("ETag", .ref("#/components/headers/ETag")),
                            ("Location", .map([
                                ("description", .string("`/things/` + the normalised thing, percent-encoded as a path segment (e.g. `/things/A%2FB`).")),
                                ("required", .boolean(true)),
                                ("schema", .map([
                                    ("type", .string("string")),
                                    ("pattern", .string("^/things/[^/]+$")),
                                ])),
                            ])),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref("#/components/schemas/Thing")),
                                ("example", .map([
                                    ("thing", .string("YOLO")),
                                    ("revision", .integer(13)),
                                ])),
                            ])),
                        ])),
                        ("links", .map([
                            ("GetThingAfterAdd", .map([
                                ("operationId", .string("getThing")),
                                ("parameters", .map([
                                    ("thing", .string("$response.body#/thing")),
                                ])),
                            ])),
                            ("DeleteThingAfterAdd", .map([
                                ("operationId", .string("deleteThing")),
                                ("parameters", .map([
                                    ("thing", .string("$response.body#/thing")),
                                ])),
                            ])),
                        ])),
                    ])),
                    ("400", .ref("#/components/responses/BadRequest")),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("409", .ref("#/components/responses/Conflict")),
                    ("413", .ref("#/components/responses/PayloadTooLarge")),
                    ("415", .ref("#/components/responses/UnsupportedMediaType")),
                    ("422", .ref("#/components/responses/UnprocessableContent")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
            ("put", .map([
                ("tags", .strings(["things"])),
                ("operationId", .string("replaceThings")),
                ("summary", .string("Replace the whole list atomically.")),
                ("description", .string(#"""
                    Each entry is normalised like `POST /things`; an invalid entry, duplicates after
                    normalisation, or more than 10,000 entries → `422` (with `errors`, `key` = `things/<index>`),
                    and nothing is applied. A list equal to the current one changes nothing.

                    """#)),
                ("parameters", .sequence([
                    .ref("#/components/parameters/IfMatch"),
                ])),
                ("security", .sequence([
                    .map([
                        ("apiToken", .strings([])),
                    ]),
                ])),
                ("requestBody", .map([
                    ("required", .boolean(true)),
                    ("content", .map([
                        ("application/json", .map([
                            ("schema", .ref("#/components/schemas/ThingListWrite")),
                            ("example", .map([
                                ("things", .strings(["yolo", "btw", "imho"])),
                            ])),
                        ])),
                    ])),
                ])),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("Replaced; the new list.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                            ("ETag", .ref("#/components/headers/ETag")),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref("#/components/schemas/ThingList")),
                            ])),
                        ])),
                    ])),
                    ("400", .ref("#/components/responses/BadRequest")),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("412", .ref("#/components/responses/PreconditionFailed")),
                    ("413", .ref("#/components/responses/PayloadTooLarge")),
                    ("415", .ref("#/components/responses/UnsupportedMediaType")),
                    ("422", .ref("#/components/responses/UnprocessableContent")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/things/{thing}`
    static func pathThingsThing() -> YAMLNode {
        .map([
            ("parameters", .sequence([
                .ref("#/components/parameters/ThingPath"),
            ])),
            ("get", .map([
                ("tags", .strings(["things"])),
                ("operationId", .string("getThing")),
                ("summary", .string("One thing (the segment is percent-decoded and normalised, so `/things/yolo` finds `YOLO`).")),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("Found.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref("#/components/schemas/Thing")),
                                ("example", .map([
                                    ("thing", .string("YOLO")),
                                ])),
                            ])),
                        ])),
                    ])),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("404", .ref("#/components/responses/NotFound")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
            ("delete", .map([
                ("tags", .strings(["things"])),
                ("operationId", .string("deleteThing")),
                ("summary", .string("Remove one thing.")),
                ("security", .sequence([
                    .map([
                        ("apiToken", .strings([])),
                    ]),
                ])),
                ("responses", .map([
                    ("204", .map([
                        ("description", .string("Removed. `Tidings-Revision` is the list's new revision.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                        ])),
                        ("links", .map([
                            ("GetThingAfterDelete", .map([
                                ("operationId", .string("getThing")),
                                ("parameters", .map([
                                    ("thing", .string("$request.path.thing")),
                                ])),
                            ])),
                        ])),
                    ])),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("404", .ref("#/components/responses/NotFound")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/things/events`
    static func pathThingsEvents() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["streams", "things"])),
                ("operationId", .string("streamThings")),
                ("summary", .string("Event stream of the list.")),
                ("description", .string("Emits `things` (and `reset`) events; see `ThingsEvent`. Without a resume point it starts with one `things` snapshot.")),
                ("security", streamSecurity),
                ("parameters", .sequence([
                    .ref("#/components/parameters/LastEventIdQuery"),
                    .ref("#/components/parameters/LastEventIdHeader"),
                    .ref("#/components/parameters/Conflate"),
                ])),
                ("responses", .map([
                    ("200", .ref("#/components/responses/EventStream")),
                    ("400", .ref("#/components/responses/BadRequest")),
                    ("401", .ref("#/components/responses/Unauthorized")),
                ])),
            ])),
        ])
    }
}
