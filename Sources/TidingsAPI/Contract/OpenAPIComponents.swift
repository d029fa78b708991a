// The shared components (other than schemas) of the served contract.

extension OpenAPIContract {
    /// `components.securitySchemes`
    static func securitySchemes() -> YAMLNode {
        .map([
            ("apiToken", .map([
                ("type", .string("http")),
                ("scheme", .string("bearer")),
                ("description", .string("`--api-token T` (env `TIDINGS_API_TOKEN`). Needed for every write; also accepted for reads.")),
            ])),
            ("readToken", .map([
                ("type", .string("http")),
                ("scheme", .string("bearer")),
                ("description", .string("`--read-token R` (env `TIDINGS_READ_TOKEN`). Needed for reads except `/healthz`, `/readyz`.")),
            ])),
            ("streamTicket", .map([
                ("type", .string("apiKey")),
                ("in", .string("query")),
                ("name", .string("ticket")),
                ("description", .string(#"""
                    A single-use ticket from `POST /stream-tickets` (base64url, 22..128 characters), good for one
                    event-stream request within 60 seconds; event streams only.

                    """#)),
            ])),
        ])
    }

    /// `components.headers`
    static func headers() -> YAMLNode {
        .map([
            ("TidingsRevision", .map([
                ("description", .string("The global revision this response's content reflects (decimal, unsigned 64-bit).")),
                ("required", .boolean(true)),
                ("schema", .map([
                    ("type", .string("string")),
                    ("pattern", .string("^[0-9]{1,20}$")),
                ])),
            ])),
            ("ETag", .map([
                ("description", .string(#"The resource's revision, quoted (strong validator), e.g. `"42"`."#)),
                ("required", .boolean(true)),
                ("schema", .map([
                    ("type", .string("string")),
                    ("pattern", .string(#"^"[0-9]{1,20}"$"#)),
                ])),
            ])),
            ("RetryAfter", .map([
                ("description", .string("Seconds to wait before retrying.")),
                ("required", .boolean(true)),
                ("schema", .map([
                    ("type", .string("string")),
                    ("pattern", .string("^[0-9]+$")),
                ])),
            ])),
            ("WWWAuthenticate", .map([
                ("description", .string(#"`Bearer` challenge (RFC 6750), e.g. `Bearer realm="tidings", error="invalid_token"`."#)),
                ("required", .boolean(true)),
                ("schema", .map([
                    ("type", .string("string")),
                    ("pattern", .string("^Bearer")),
                ])),
            ])),
        ])
    }

    /// `components.parameters`
    static func parameters() -> YAMLNode {
        .map([
            ("ThingPath", .map([
                ("name", .string("thing")),
                ("in", .string("path")),
                ("required", .boolean(true)),
                ("description", .string(#"""
                    A thing, percent-encoded as one path segment. It is decoded and normalised like a posted
                    thing before lookup. The literal segment `events` is the event stream, not a thing.

                    """#)),
                ("schema", .map([
                    ("type", .string("string")),
                    ("minLength", .integer(1)),
                ])),
                ("examples", .map([
                    ("acronym", .map([
                        ("value", .string("YOLO")),
                    ])),
                    ("lower", .map([
                        ("value", .string("yolo")),
                    ])),
                ])),
            ])),
            ("IfMatch", .map([
                ("name", .string("If-Match")),
                ("in", .string("header")),
                ("required", .boolean(false)),
                ("description", .string(#"""
                    Apply only if the resource's current revision is this one (`"42"`, or `*`). Otherwise `412`
                    and nothing changes.

                    """#)),
                ("schema", .map([
                    ("type", .string("string")),
                ])),
            ])),
            ("IfNoneMatch", .map([
                ("name", .string("If-None-Match")),
                ("in", .string("header")),
                ("required", .boolean(false)),
                ("description", .string("A list of entity tags (weak comparison) or `*`; when the current `ETag` matches → `304`.")),
                ("schema", .map([
                    ("type", .string("string")),
                ])),
            ])),
            ("LastEventIdQuery", .map([
                ("name", .string("lastEventId")),
                ("in", .string("query")),
                ("required", .boolean(false)),
                ("description", .string(#"""
                    Resume after this revision (same as the `Last-Event-ID` header; the header wins when both are
                    present). Replays every retained covered event after it, then goes live. Older than the
                    replay buffer or newer than the current revision (including a value beyond 64 bits) → a
                    `reset` event and a fresh snapshot. Not 1 to 20 decimal digits → `400`.

                    """#)),
                ("schema", .map([
                    ("type", .string("string")),
                    ("pattern", .string("^[0-9]{1,20}$")),
                ])),
            ])),
            ("LastEventIdHeader", .map([
                ("name", .string("Last-Event-ID")),
                ("in", .string("header")),
                ("required", .boolean(false)),
                ("description", .string("Sent by `EventSource` when it reconnects. Same meaning and rules as `lastEventId`.")),
                ("schema", .map([
                    ("type", .string("string")),
                    ("pattern", .string("^[0-9]{1,20}$")),
                ])),
            ])),
            ("Conflate", .map([
                ("name", .string("conflate")),
                ("in", .string("query")),
                ("required", .boolean(false)),
                ("description", .string(#"""
                    `true`: the stream is never cut off for being slow. While its unsent output is over the
                    bound, a newer event for the same preference key (or for `things`, or `posts`) replaces
                    the older one still queued, so the client receives the latest state of everything it
                    covers, ids still strictly increasing (some skipped). Anything but `true` or `false` → `400`.

                    """#)),
                ("schema", .map([
                    ("type", .string("boolean")),
                    ("default", .boolean(false)),
                ])),
            ])),
            ("StreamKeys", .map([
                ("name", .string("keys")),
                ("in", .string("query")),
                ("required", .boolean(false)),
                ("description", .string("Comma-separated preference keys (default every key). An unknown key → `422`.")),
                ("schema", .map([
                    ("type", .string("string")),
                    ("pattern", .string("^[A-Za-z_][A-Za-z0-9_.-]{0,63}(,[A-Za-z_][A-Za-z0-9_.-]{0,63})*$")),
                ])),
            ])),
        ])
    }

    /// `components.responses`
    static func responses() -> YAMLNode {
        .map([
            ("NotModified", .map([
                ("description", .string("`If-None-Match` matched the current `ETag`. No body.")),
                ("headers", .map([
                    revisionHeader,
                    ("ETag", .ref("#/components/headers/ETag")),
                ])),
            ])),
            ("BadRequest", problemResponse("Malformed JSON, not UTF-8, or a malformed or out-of-range query or header value.")),
            ("Unauthorized", problemResponse("A required token (or stream ticket) is missing, wrong, used or expired.", headers: [("WWW-Authenticate", .ref("#/components/headers/WWWAuthenticate"))])),
            ("NotFound", problemResponse("No such resource.")),
            ("Conflict", problemResponse("The normalised thing already exists.")),
            ("PreconditionFailed", problemResponse("`If-Match` did not match the current revision; nothing changed.", headers: [("ETag", .ref("#/components/headers/ETag"))])),
            ("PayloadTooLarge", problemResponse("The body is over the limit (default 1 MiB).")),
            ("UnsupportedMediaType", problemResponse("An explicit request `Content-Type` that is not JSON (see Conventions).")),
            ("UnprocessableContent", problemResponse("Well-formed JSON (or query) that is invalid; `errors` names every bad member.")),
            ("ServiceUnavailable", problemResponse("Overloaded or shutting down.", headers: [("Retry-After", .ref("#/components/headers/RetryAfter"))])),
            ("EventStream", .map([
                ("description", .string(#"""
                    A Server-Sent-Events stream that does not end until the client leaves or the server drains.
                    Headers also include `Cache-Control: no-cache, no-transform` and `X-Accel-Buffering: no`. The stream opens at
                    once with a `retry:` line. Then, per event:

                        id: <revision>
                        event: <name>
                        data: <one line of JSON>
                        <blank line>

                    Event names and `data` schemas: `preference` → `PreferenceEvent`; `things` → `ThingsEvent`;
                    `posts` → `PostsState`; `reset` → `ResetEvent` (followed by a fresh snapshot). Without a
                    resume point the stream first sends the current value of everything it covers (one
                    `preference` per key, one `things`, one `posts`), all with `id:` = the current revision, then
                    live changes. A stream only receives what it covers. Heartbeat: a comment `: keep-alive` every
                    `--heartbeat` seconds. A subscriber whose unsent output passes 1 MiB is cut off (it can
                    resume with `Last-Event-ID`); so is one that takes nothing off the wire for four heartbeats
                    while output waits for it, in the server or in the socket's buffers (a client that stopped
                    reading during its snapshot), except on a `conflate=true` stream. A snapshot, `reset` or
                    replay page does not count against the 1 MiB, but has bounds of its own: one whose client has
                    not taken it within 30 s plus one second per 64 KiB of it ends the stream, and so does
                    catch-up output piling up past twice the largest snapshot (at least 1 MiB): the client
                    resumes with `Last-Event-ID`. When the server has no room for another stream it answers `200`
                    with a jittered `retry:` of a few seconds and ends the stream at once.

                    """#)),
                ("headers", .map([
                    revisionHeader,
                    ("Cache-Control", .map([
                        ("required", .boolean(true)),
                        ("schema", .map([
                            ("type", .string("string")),
                            ("const", .string("no-cache, no-transform")),
                        ])),
                    ])),
                    ("X-Accel-Buffering", .map([
                        ("required", .boolean(true)),
                        ("schema", .map([
                            ("type", .string("string")),
                            ("const", .string("no")),
                        ])),
                    ])),
                ])),
                ("content", .map([
                    ("text/event-stream", .map([
                        ("schema", .ref("#/components/schemas/StreamEvent")),
                        ("example", .string(#"""
                            retry: 3000

                            id: 7
                            event: preference
                            data: {"key":"age","value":6,"revision":7}

                            : keep-alive

                            """#)),
                    ])),
                ])),
            ])),
        ])
    }
}
