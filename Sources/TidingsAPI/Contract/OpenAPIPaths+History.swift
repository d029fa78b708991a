// The history paths of the served contract (API.md "History"): pages of change records, as-of
// reads on the resources' GETs, rollback, and the schemas they answer with.

extension OpenAPIContract {
    /// A history page's query parameters (`topics`/`keys` only on `/history`).
    private static func historyParameters(all: Bool) -> [YAMLNode] {
        func revision(_ name: String, _ description: String) -> YAMLNode {
            .map([
                ("name", .string(name)),
                ("in", .string("query")),
                ("required", .boolean(false)),
                ("description", .string(description)),
                ("schema", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(0)),
                    // Revisions are signed 64-bit in the stores; larger ones never exist.
                    ("maximum", .integer(Int.max)),
                ])),
            ])
        }
        var parameters: [YAMLNode] = [
            revision("before", "Only records with a lower revision, newest first (page backwards). With `after`: the upper end of a window read oldest first."),
            revision("after", "Only records with a higher revision, oldest first (read forwards)."),
            .map([
                ("name", .string("limit")),
                ("in", .string("query")),
                ("required", .boolean(false)),
                ("description", .string("Records per page (default 100). A page is also cut at about 1 MiB.")),
                ("schema", .map([
                    ("type", .string("integer")),
                    ("minimum", .integer(1)),
                    ("maximum", .integer(1_000)),
                    ("default", .integer(100)),
                ])),
            ]),
        ]
        if all {
            parameters += [
                .map([
                    ("name", .string("topics")),
                    ("in", .string("query")),
                    ("required", .boolean(false)),
                    ("description", .string("Comma-separated topics (default both): `preferences`, `things`.")),
                    ("schema", .map([
                        ("type", .string("string")),
                        ("pattern", .string("^(preferences|things)(,(preferences|things))*$")),
                    ])),
                ]),
                .ref("#/components/parameters/StreamKeys"),
            ]
        }
        return parameters
    }

    /// `GET` of a history page.
    private static func historyOperation(operationId: String, summary: String, all: Bool) -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["history"])),
                ("operationId", .string(operationId)),
                ("summary", .string(summary)),
                ("description", .string(#"""
                    Change records, newest first; `after` reads oldest first; both give a window read oldest
                    first. At most `limit` records and about 1 MiB per page; `next` (also
                    `Link: <...>; rel="next"`) is the next page's URL, `null` when no more records exist.
                    Changes of the posts document are not records. Records older than the retention
                    (`--history-days`, `--history-bytes`) are gone. A malformed parameter → `400`.

                    """#)),
                ("parameters", .sequence(historyParameters(all: all))),
                ("responses", .map([
                    ("200", jsonResponse(
                        "A page of change records.",
                        schema: .ref("#/components/schemas/HistoryPage"),
                        example: .map([
                            ("changes", .sequence([
                                .map([
                                    ("revision", .integer(42)),
                                    ("at", .string("2026-11-26T09:32:55.123456Z")),
                                    ("actor", .string("deploy-bot")),
                                    ("reason", .string("canary 10%")),
                                    ("topic", .string("preferences")),
                                    ("key", .string("age")),
                                    ("before", .integer(5)),
                                    ("after", .integer(6)),
                                ]),
                            ])),
                            ("next", .string("/history?before=42")),
                        ]),
                        headers: [("Link", .ref("#/components/headers/Link"))]
                    )),
                    ("400", shared("BadRequest")),
                    ("401", shared("Unauthorized")),
                ] + (all ? [("422", shared("UnprocessableContent"))] : []) + [
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/history`
    static func pathHistory() -> YAMLNode {
        historyOperation(operationId: "listHistory", summary: "Every change record, paged.", all: true)
    }

    /// `/preferences/{key}/history`
    static func pathPreferenceHistory(_ p: PreferenceContract) -> YAMLNode {
        historyOperation(operationId: p.operationId("getPreferenceHistory"), summary: "The change records of `\(p.key)`, paged.", all: false)
    }

    /// `/things/history`
    static func pathThingsHistory() -> YAMLNode {
        historyOperation(operationId: "getThingsHistory", summary: "The change records of the thing list, paged.", all: false)
    }

    /// `POST /preferences/rollback` and `POST /things/rollback`.
    static func pathRollback(things: Bool) -> YAMLNode {
        .map([
            ("post", .map([
                ("tags", .strings(["history"])),
                ("operationId", .string(things ? "rollbackThings" : "rollbackPreferences")),
                ("summary", .string(things ? "Put the thing list back as it was at a revision." : "Put preferences back as they were at a revision.")),
                ("description", .string(#"""
                    One ordinary write: every key (or the keys named; for things, the list) is set back to its
                    value as of `revision`, atomically, announced on streams like any write and recorded with
                    the caller as actor and `rollback to R` as reason unless `Tidings-Reason` says otherwise.
                    Keys already at that value change nothing; nothing to change → `200` with no records and no
                    new revision. `If-Match` names the current global revision (`412` otherwise). A revision
                    newer than the current one or an unknown key → `422`; older than the retained history →
                    `410` naming the oldest revision that can be read.

                    """#)),
                ("security", securityAnyOf("apiToken")),
                ("parameters", .sequence([
                    .ref("#/components/parameters/IfMatch"),
                    .ref("#/components/parameters/TidingsReason"),
                ])),
                ("requestBody", .map([
                    ("required", .boolean(true)),
                    ("content", .map([
                        ("application/json", .map([
                            ("schema", .ref(things ? "#/components/schemas/ThingsRollback" : "#/components/schemas/PreferencesRollback")),
                            ("example", things ? .map([("revision", .integer(40))])
                                : .map([("revision", .integer(40)), ("keys", .strings(["age"]))])),
                        ])),
                    ])),
                ])),
                ("responses", .map([
                    ("200", jsonResponse("Rolled back; the records this write made (none when nothing differed).",
                                         schema: .ref("#/components/schemas/RollbackResult"))),
                    ("400", shared("BadRequest")),
                    ("401", shared("Unauthorized")),
                    ("410", shared("HistoryGone")),
                    ("412", shared("PreconditionFailed")),
                    ("413", shared("PayloadTooLarge")),
                    ("415", shared("UnsupportedMediaType")),
                    ("422", shared("UnprocessableContent")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
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

    /// The history's members of `components.parameters`.
    static func historyParameterComponents() -> [(String, YAMLNode)] {
        [
            ("AsOf", .map([
                ("name", .string("asOf")),
                ("in", .string("query")),
                ("required", .boolean(false)),
                ("description", .string(#"""
                    A revision, or an RFC 3339 time (the last revision committed at or before it). Newer than the
                    current revision → `422`; older than the retained history → `410`; neither form → `400`.

                    """#)),
                ("schema", .map([
                    ("anyOf", .sequence([
                        .map([("type", .string("string")), ("pattern", .string("^[0-9]{1,20}$"))]),
                        .map([("type", .string("string")), ("format", .string("date-time"))]),
                    ])),
                ])),
            ])),
            ("TidingsReason", .map([
                ("name", .string("Tidings-Reason")),
                ("in", .string("header")),
                ("required", .boolean(false)),
                ("description", .string("Why: recorded with every change of this write (at most 256 characters of UTF-8 text without control characters; otherwise `422`). Every write takes it.")),
                ("schema", .map([
                    ("type", .string("string")),
                    ("maxLength", .integer(256)),
                    ("pattern", .string(#"^[^\x00-\x1F\x7F-\x9F\uFFFD]*$"#)),
                ])),
            ])),
        ]
    }

    /// The history's members of `components.responses`.
    static func historyResponseComponents() -> [(String, YAMLNode)] {
        [("HistoryGone", response("Older than the retained history; `oldestRevision` is the oldest revision that can be read.",
                                  mediaType: "application/problem+json", schema: .ref("#/components/schemas/HistoryProblem"),
                                  headers: []))]
    }

    /// The `Link` header of a history page.
    static func linkHeader() -> YAMLNode {
        .map([
            ("description", .string(#"`<next page URL>; rel="next"` when more records exist."#)),
            ("required", .boolean(false)),
            ("schema", .map([("type", .string("string"))])),
        ])
    }

    /// The history's members of `components.schemas`.
    static func historySchemas(keys: [String]) -> [(String, YAMLNode)] {
        let revision: YAMLNode = .map([("type", .string("integer")), ("minimum", .integer(0))])
        return [
            ("HistoryRecord", .map([
                ("type", .string("object")),
                ("description", .string(#"""
                    One change: its revision, when (`at`, RFC 3339 UTC, the committing server's clock), who
                    (`actor`: the credential's name — `api`, `read`, a `--tokens` name, `anonymous` on an open
                    server, `unknown` for changes older than the history), why (`reason`, from
                    `Tidings-Reason`), and what: a preference's `before` and `after` values (the default when
                    reset), or for things the thing added (`after`) or removed (`before`), or both lists around
                    a `replace`.

                    """#)),
                ("required", .strings(["revision", "at", "actor", "topic", "before", "after"])),
                ("properties", .map([
                    ("revision", revision),
                    ("at", .map([("type", .string("string")), ("format", .string("date-time"))])),
                    ("actor", .map([("type", .string("string"))])),
                    ("reason", .map([("type", .string("string")), ("maxLength", .integer(256))])),
                    ("topic", .map([("type", .string("string")), ("enum", .strings(["preferences", "things"]))])),
                    ("key", .map([("type", .string("string"))])),
                    ("op", .map([("type", .string("string")), ("enum", .strings(["add", "remove", "replace"]))])),
                    ("before", .map([("description", .string("A preference value, a thing, a list of things, or null."))])),
                    ("after", .map([("description", .string("A preference value, a thing, a list of things, or null."))])),
                ])),
            ])),
            ("HistoryPage", .map([
                ("type", .string("object")),
                ("required", .strings(["changes", "next"])),
                ("additionalProperties", .boolean(false)),
                ("properties", .map([
                    ("changes", .map([("type", .string("array")), ("items", .ref("#/components/schemas/HistoryRecord"))])),
                    ("next", .map([("type", .sequence([.string("string"), .string("null")]))])),
                ])),
            ])),
            ("PreferencesRollback", .map([
                ("type", .string("object")),
                ("required", .strings(["revision"])),
                ("properties", .map([
                    ("revision", revision),
                    ("keys", .map([
                        ("type", .string("array")),
                        ("minItems", .integer(1)),
                        ("items", .map([("type", .string("string")), ("enum", .strings(keys))])),
                    ])),
                ])),
            ])),
            ("ThingsRollback", .map([
                ("type", .string("object")),
                ("required", .strings(["revision"])),
                ("properties", .map([("revision", revision)])),
            ])),
            ("RollbackResult", .map([
                ("type", .string("object")),
                ("required", .strings(["revision", "changes"])),
                ("additionalProperties", .boolean(false)),
                ("properties", .map([
                    ("revision", revision),
                    ("changes", .map([("type", .string("array")), ("items", .ref("#/components/schemas/HistoryRecord"))])),
                ])),
            ])),
            ("HistoryProblem", .map([
                ("allOf", .sequence([.ref("#/components/schemas/Problem")])),
                ("properties", .map([
                    ("oldestRevision", revision),
                    ("currentRevision", revision),
                ])),
            ])),
            ("ChangeEvent", .map([
                ("description", .string("`data` of a `change` event on the audit stream (`/events?topics=history`): a `HistoryRecord`.")),
                ("allOf", .sequence([.ref("#/components/schemas/HistoryRecord")])),
            ])),
        ]
    }
}
