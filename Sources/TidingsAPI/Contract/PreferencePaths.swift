// The paths of one declared preference: `/preferences/<key>` (GET, PUT, DELETE), its event stream
// and its history.

extension PreferenceContract {
    /// `/preferences/<key>`, `/preferences/<key>/events` and `/preferences/<key>/history`, each
    /// as HTTPCaching answers it. The history's is `/things/history`'s from the base (`template`)
    /// with this key's operation id and summary: the two differ in nothing else.
    func pathItems(historyTemplate template: YAMLNode) -> [(String, YAMLNode)] {
        typealias C = OpenAPIContract
        let path = "/preferences/" + key
        let history = template
            .filling(["get", "operationId"], with: .string(operationId("getPreferenceHistory")))
            .filling(["get", "summary"], with: .string("The change records of `\(key)`, paged."))
        return [
            (path, C.applyingCaching(toPathItem: C.addingAsOf(to: C.pathPreference(self)), path: path)),
            (path + "/events", C.applyingCaching(toPathItem: C.pathPreferenceEvents(self), path: path + "/events")),
            (path + "/history", history),
        ]
    }
}

extension OpenAPIContract {
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
                ] + shared(codes: "304", "401", "404", "503"))),
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
                ] + shared(codes: "400", "401", "404", "412", "413", "415", "422", "503"))),
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
                ] + shared(codes: "401", "404", "412", "503"))),
            ])),
        ])
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

    /// `pathItem` with `?asOf=` on its `GET` and the answers it adds.
    static func addingAsOf(to pathItem: YAMLNode) -> YAMLNode {
        guard let get = pathItem["get"], case let .sequence(parameters) = get["parameters"] ?? .sequence([]),
              let responses = get["responses"] else { return pathItem }
        var answered = responses
        if answered["400"] == nil { answered = answered.setting("400", shared("BadRequest")) }
        answered = answered.setting("410", shared("HistoryGone"))
        if answered["422"] == nil { answered = answered.setting("422", shared("UnprocessableContent")) }
        let description = (get["description"].flatMap { if case let .string(text) = $0 { text } else { nil } } ?? "")
            + "`asOf` answers the resource as it stood at that revision or time (from the history), with "
            + "`Tidings-Revision` = that revision and the `ETag` of the last change at or before it.\n"
        return pathItem.setting("get", get
            .setting("description", .string(description))
            .setting("parameters", .sequence(parameters + [.ref("#/components/parameters/AsOf")]))
            .setting("responses", answered))
    }
}
