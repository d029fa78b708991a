// The preferences paths of the served contract.

extension OpenAPIContract {
    /// `/preferences`
    static func pathPreferences(_ all: PreferencesContract) -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["preferences"])),
                ("operationId", .string("listPreferences")),
                ("summary", .string("Every declared key with its current value (defaults included).")),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("The map of every declared preference.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref("#/components/schemas/PreferenceMap")),
                                ("example", all.valuesExample),
                            ])),
                        ])),
                    ])),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
            ("patch", .map([
                ("tags", .strings(["preferences"])),
                ("operationId", .string("patchPreferences")),
                ("summary", .string("JSON merge patch of several preferences, all or nothing.")),
                ("description", .string(#"""
                    Every member names a preference; `null` resets it to its default. All members are validated
                    first: if any key is unknown or any value invalid → `422` whose `errors` lists every bad key,
                    and nothing is applied. Otherwise every change is applied atomically (one durable commit);
                    each key whose value actually changes takes its own revision, in the order of the members,
                    and gets its own `preference` event. An empty object changes nothing and answers `200`.
                    Also accepted as `application/merge-patch+json`.

                    """#)),
                ("security", .sequence([
                    .map([
                        ("apiToken", .strings([])),
                    ]),
                ])),
                ("requestBody", .map([
                    ("required", .boolean(true)),
                    ("content", .map([
                        ("application/json", .map([
                            ("schema", .ref("#/components/schemas/PreferencesPatch")),
                            ("example", all.patchExample),
                        ])),
                    ])),
                ])),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("Applied; the whole map after the change.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref("#/components/schemas/PreferenceMap")),
                            ])),
                        ])),
                    ])),
                    ("400", .ref("#/components/responses/BadRequest")),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("413", .ref("#/components/responses/PayloadTooLarge")),
                    ("415", .ref("#/components/responses/UnsupportedMediaType")),
                    ("422", .ref("#/components/responses/UnprocessableContent")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/preferences/<key>` of one declared preference (exact value schemas, see PreferenceContract).
    static func pathPreference(_ p: PreferenceContract) -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["preferences"])),
                ("operationId", .string(p.operationId("getPreference"))),
                ("summary", .string("The record of `\(p.key)`.")),
                ("parameters", .sequence([
                    .ref("#/components/parameters/IfNoneMatch"),
                ])),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string(#"The record; `ETag` is its revision (`"0"` when never set)."#)),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                            ("ETag", .ref("#/components/headers/ETag")),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref(p.recordRef)),
                                ("example", p.recordExample),
                            ])),
                        ])),
                    ])),
                    ("304", .ref("#/components/responses/NotModified")),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("404", .ref("#/components/responses/NotFound")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
            ("put", .map([
                ("tags", .strings(["preferences"])),
                ("operationId", .string(p.operationId("putPreference"))),
                ("summary", .string("Set `\(p.key)`.")),
                ("description", .string(#"""
                    `{"value": v}` where `v` has the key's declared type and meets its constraints
                    (`minimum`, `maximum`, `maxLength`, `enum` of a `--preferences` file). Types follow JSON
                    Schema and are strict: an `integer` preference refuses `1.5` and `"1"` (and anything outside
                    the signed 64-bit range) but takes `2.0` as `2`; a `number` preference (a finite double)
                    accepts `2`; a `string` preference refuses `5`. `null` is not a value
                    (use `DELETE`). A wrong type, a broken constraint or a missing `value` → `422` naming the
                    expected type. An unknown key → `404` (checked before the body).

                    """#)),
                ("parameters", .sequence([
                    .ref("#/components/parameters/IfMatch"),
                ])),
                ("requestBody", .map([
                    ("required", .boolean(true)),
                    ("content", .map([
                        ("application/json", .map([
                            ("schema", .ref(p.writeRef)),
                            ("example", p.writeExample),
                        ])),
                    ])),
                ])),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("Stored (or unchanged when equal to the current value); the record.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                            ("ETag", .ref("#/components/headers/ETag")),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref(p.recordRef)),
                            ])),
                        ])),
                    ])),
                    ("400", .ref("#/components/responses/BadRequest")),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("404", .ref("#/components/responses/NotFound")),
                    ("412", .ref("#/components/responses/PreconditionFailed")),
                    ("413", .ref("#/components/responses/PayloadTooLarge")),
                    ("415", .ref("#/components/responses/UnsupportedMediaType")),
                    ("422", .ref("#/components/responses/UnprocessableContent")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
            ("delete", .map([
                ("tags", .strings(["preferences"])),
                ("operationId", .string(p.operationId("deletePreference"))),
                ("summary", .string("Reset `\(p.key)` to its default.")),
                ("description", .string(#"""
                    Answers `200` with the record (not `204`: the client learns the default and the revision).
                    Resetting a preference that already holds its default changes nothing. The key stays
                    declared, so a later `GET` answers `200` with the default.

                    """#)),
                ("parameters", .sequence([
                    .ref("#/components/parameters/IfMatch"),
                ])),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("Reset; the record.")),
                        ("headers", .map([
                            ("Tidings-Revision", .ref("#/components/headers/TidingsRevision")),
                            ("ETag", .ref("#/components/headers/ETag")),
                        ])),
                        ("content", .map([
                            ("application/json", .map([
                                ("schema", .ref(p.recordRef)),
                            ])),
                        ])),
                    ])),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("404", .ref("#/components/responses/NotFound")),
                    ("412", .ref("#/components/responses/PreconditionFailed")),
                    ("503", .ref("#/components/responses/ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/preferences/events`
    static func pathPreferencesEvents() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["streams", "preferences"])),
                ("operationId", .string("streamPreferences")),
                ("summary", .string("Event stream of preference changes (all keys, or those in `keys`).")),
                ("description", .string(#"""
                    Emits `preference` (and `reset`) events; see `PreferenceEvent`. Without a resume point the
                    stream first sends one `preference` event per covered key with the current value, all with
                    `id:` = the current revision. An unknown key in `keys` → `422`.

                    """#)),
                ("security", streamSecurity),
                ("parameters", .sequence([
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

    /// `/preferences/<key>/events` of one declared preference.
    static func pathPreferenceEvents(_ p: PreferenceContract) -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["streams", "preferences"])),
                ("operationId", .string(p.operationId("streamPreference"))),
                ("summary", .string("Event stream of `\(p.key)`.")),
                ("description", .string(#"""
                    Emits `preference` (and `reset`) events for this key only. Unknown key → `404` (before the
                    stream opens).

                    """#)),
                ("security", streamSecurity),
                ("parameters", .sequence([
                    .ref("#/components/parameters/LastEventIdQuery"),
                    .ref("#/components/parameters/LastEventIdHeader"),
                    .ref("#/components/parameters/Conflate"),
                ])),
                ("responses", .map([
                    ("200", .ref(p.streamResponseRef)),
                    ("400", .ref("#/components/responses/BadRequest")),
                    ("401", .ref("#/components/responses/Unauthorized")),
                    ("404", .ref("#/components/responses/NotFound")),
                ])),
            ])),
        ])
    }
}
