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
                    ("200", jsonResponse(
                        "The map of every declared preference.",
                        schema: .ref("#/components/schemas/PreferenceMap"),
                        example: all.valuesExample
                    )),
                    ("401", shared("Unauthorized")),
                    ("503", shared("ServiceUnavailable")),
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
                ("security", securityAnyOf("apiToken")),
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
                    ("200", jsonResponse(
                        "Applied; the whole map after the change.",
                        schema: .ref("#/components/schemas/PreferenceMap")
                    )),
                    ("400", shared("BadRequest")),
                    ("401", shared("Unauthorized")),
                    ("413", shared("PayloadTooLarge")),
                    ("415", shared("UnsupportedMediaType")),
                    ("422", shared("UnprocessableContent")),
                    ("503", shared("ServiceUnavailable")),
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
                    ("200", jsonResponse(
                        #"The record; `ETag` is its revision (`"0"` when never set)."#,
                        schema: .ref(p.recordRef),
                        example: p.recordExample,
                        headers: [("ETag", .ref("#/components/headers/ETag"))]
                    )),
                    ("304", shared("NotModified")),
                    ("401", shared("Unauthorized")),
                    ("404", shared("NotFound")),
                    ("503", shared("ServiceUnavailable")),
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
                    ("200", jsonResponse(
                        "Stored (or unchanged when equal to the current value); the record.",
                        schema: .ref(p.recordRef),
                        headers: [("ETag", .ref("#/components/headers/ETag"))]
                    )),
                    ("400", shared("BadRequest")),
                    ("401", shared("Unauthorized")),
                    ("404", shared("NotFound")),
                    ("412", shared("PreconditionFailed")),
                    ("413", shared("PayloadTooLarge")),
                    ("415", shared("UnsupportedMediaType")),
                    ("422", shared("UnprocessableContent")),
                    ("503", shared("ServiceUnavailable")),
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
                    ("200", jsonResponse(
                        "Reset; the record.",
                        schema: .ref(p.recordRef),
                        headers: [("ETag", .ref("#/components/headers/ETag"))]
                    )),
                    ("401", shared("Unauthorized")),
                    ("404", shared("NotFound")),
                    ("412", shared("PreconditionFailed")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/preferences/events`
    static func pathPreferencesEvents() -> YAMLNode {
        streamOperation(
            tags: ["streams", "preferences"],
            operationId: "streamPreferences",
            summary: "Event stream of preference changes (all keys, or those in `keys`).",
            description: #"""
                Emits `preference` (and `reset`) events; see `PreferenceEvent`. Without a resume point the
                stream first sends one `preference` event per covered key with the current value, all with
                `id:` = the current revision. An unknown key in `keys` → `422`.

                """#,
            parameters: [.ref("#/components/parameters/StreamKeys")],
            responses: [("422", shared("UnprocessableContent"))]
        )
    }

    /// `/preferences/<key>/events` of one declared preference.
    static func pathPreferenceEvents(_ p: PreferenceContract) -> YAMLNode {
        streamOperation(
            tags: ["streams", "preferences"],
            operationId: p.operationId("streamPreference"),
            summary: "Event stream of `\(p.key)`.",
            description: #"""
                Emits `preference` (and `reset`) events for this key only. Unknown key → `404` (before the
                stream opens).

                """#,
            stream: .ref(p.streamResponseRef),
            responses: [("404", shared("NotFound"))]
        )
    }
}
