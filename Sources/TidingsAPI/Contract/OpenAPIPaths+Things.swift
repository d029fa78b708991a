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
                    ("200", jsonResponse(
                        "The list; `ETag` is the list's revision.",
                        schema: .ref("#/components/schemas/ThingList"),
                        example: .map([
                            ("things", .strings(["YOLO", "BTW"])),
                            ("revision", .integer(12)),
                        ]),
                        headers: [("ETag", .ref("#/components/headers/ETag"))]
                    )),
                    ("304", shared("NotModified")),
                    ("401", shared("Unauthorized")),
                    ("503", shared("ServiceUnavailable")),
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
                ("security", securityAnyOf("apiToken")),
                ("responses", .map([
                    ("201", .map([
                        ("description", .string("Appended; the normalised thing and the list's new revision.")),
                        ("headers", .map([
                            revisionHeader,
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
                    ("400", shared("BadRequest")),
                    ("401", shared("Unauthorized")),
                    ("409", shared("Conflict")),
                    ("413", shared("PayloadTooLarge")),
                    ("415", shared("UnsupportedMediaType")),
                    ("422", shared("UnprocessableContent")),
                    ("503", shared("ServiceUnavailable")),
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
                ("security", securityAnyOf("apiToken")),
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
                    ("200", jsonResponse(
                        "Replaced; the new list.",
                        schema: .ref("#/components/schemas/ThingList"),
                        headers: [("ETag", .ref("#/components/headers/ETag"))]
                    )),
                    ("400", shared("BadRequest")),
                    ("401", shared("Unauthorized")),
                    ("412", shared("PreconditionFailed")),
                    ("413", shared("PayloadTooLarge")),
                    ("415", shared("UnsupportedMediaType")),
                    ("422", shared("UnprocessableContent")),
                    ("503", shared("ServiceUnavailable")),
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
                    ("200", jsonResponse(
                        "Found.",
                        schema: .ref("#/components/schemas/Thing"),
                        example: .map([
                            ("thing", .string("YOLO")),
                        ])
                    )),
                    ("401", shared("Unauthorized")),
                    ("404", shared("NotFound")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
            ("delete", .map([
                ("tags", .strings(["things"])),
                ("operationId", .string("deleteThing")),
                ("summary", .string("Remove one thing.")),
                ("security", securityAnyOf("apiToken")),
                ("responses", .map([
                    ("204", .map([
                        ("description", .string("Removed. `Tidings-Revision` is the list's new revision.")),
                        ("headers", .map([
                            revisionHeader,
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
                    ("401", shared("Unauthorized")),
                    ("404", shared("NotFound")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/things/events`
    static func pathThingsEvents() -> YAMLNode {
        streamOperation(
            tags: ["streams", "things"],
            operationId: "streamThings",
            summary: "Event stream of the list.",
            description: "Emits `things` (and `reset`) events; see `ThingsEvent`. Without a resume point it starts with one `things` snapshot."
        )
    }
}
