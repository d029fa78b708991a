// The document-level members of the served contract.

extension OpenAPIContract {
    /// `info`
    static func info() -> YAMLNode {
        .map([
            ("title", .string("Tidings")),
            ("version", .string("1.0.0")),
            ("summary", .string("Observable preferences, an acronym list and a fetched feed, over REST and Server-Sent Events.")),
            ("description", .string(#"""
                Machine-readable form of the Tidings HTTP contract (`shared/API.md`). Where API.md is silent,
                this document decides, and the server follows it.

                ## Conventions (every operation)

                - Request bodies are JSON (UTF-8). Accepted request `Content-Type`s: `application/json`, any
                  `application/*+json` (e.g. `application/merge-patch+json`), and, so that plain `curl -d` works,
                  a missing `Content-Type` or `application/x-www-form-urlencoded` whose body is JSON — but only
                  for a request without an `Origin` (a web page's request must say `application/json`: the other
                  two are what a browser sends cross-site without asking first). Any other explicit type is
                  answered `415`. Parameters of a media type (`; charset=utf-8`) are ignored.
                - `Host`: an HTTP/1.1 request without a `Host` field, or any request with two, → `400`. A server
                  listening on loopback (the default `127.0.0.1`) answers only to a loopback `Host` —
                  `localhost` (or a name under it), `127.x.x.x`, `[::1]`, with or without a port — and any
                  other with `421` (DNS rebinding: a page whose own name resolves to 127.0.0.1 cannot reach
                  it). Listening on any other address (`0.0.0.0`, behind a proxy), every host name is served.
                - Members of a request object that the operation does not define are ignored (except in
                  `PATCH /preferences`, where every member names a preference).
                - Responses: `application/json`; errors `application/problem+json` (RFC 9457, schema `Problem`);
                  streams `text/event-stream`.
                - Every response (also errors, `204` and `304`) carries `Tidings-Revision: R`, the global
                  revision its content reflects. A client that reads and then subscribes with `?lastEventId=R`
                  misses nothing in between.
                - Revisions are one global, durable, strictly increasing 64-bit counter (never backwards, also not
                  across restarts). The `ETag` of a changed resource is the quoted revision, `"42"`.
                  `If-None-Match` compares weakly (`W/"42"` matches `"42"`) and accepts `*`; `If-Match` compares
                  strongly and accepts `*` (which always matches an existing resource).
                - A write is answered 2xx only after it is durable. Writing a value equal to the current one
                  changes nothing: same revision, no event. Strings are equal when their UTF-8 bytes are (JSON's
                  equality), not when Unicode calls them canonically equivalent: `"é"` (U+00E9) and `"e\u0301"`
                  are different values, on every store.
                - `HEAD` works wherever `GET` does (same headers, no body). `OPTIONS` answers `204` with `Allow`
                  (and CORS headers when configured). A method the route does not support is answered `405` with
                  `Allow` (these are not listed per operation below). A method the server does not know at all
                  is answered `501`, an HTTP version it does not speak `505`: the only 5xx a client can cause.
                - Paths are matched on their raw segments first, then each segment is percent-decoded, so a
                  thing or key containing `/` is addressed as `%2F`. A trailing slash is a different path (`404`).
                  Unknown paths answer `404` problem details.
                - Query problems: a value that does not parse or breaks its declared schema (type, pattern,
                  range, e.g. `wait=31`, `topics=foo`) → `400`; a well-formed value naming something that does
                  not exist (an unknown preference key in `keys`) → `422`. Body problems: not JSON / not UTF-8 → `400`; JSON of the wrong shape or values
                  outside the constraints → `422`. Bodies over the limit (default 1 MiB) → `413`.
                - Framing (checked before routing, for every operation): a request whose length is ambiguous
                  (more than one `Content-Length`, a `Content-Length` that is not plain digits, a
                  `Transfer-Encoding` other than one `chunked`, a header name with whitespace, a folded header
                  line) → `400` and the connection is closed, so nothing in its body is read as a request. A
                  malformed chunked body → `400` (chunk extensions and trailers are accepted and ignored); a body
                  announced or de-chunked beyond 4× the body limit → `413`; `Expect` other than `100-continue` →
                  `417`; a request head over 16 KiB → `431`; a head not complete within `--header-timeout`
                  (default 10 s) of its first byte → `408`; a body not complete within `--body-timeout`
                  (default 30 s) of its head → `408`; a body while the server already receives 256 MiB of
                  bodies at once → `503`. Each of these is a problem answer with `Connection: close`. A client
                  that stops reading its answers stops being read (one largest request is kept for it). More than `--max-connections-per-client` (default 512) open connections
                  from one address → the first request on the next one is answered `503` (an event stream:
                  `200`, a jittered `retry:`, the end) and that connection closed.
                - Sizes: a string preference without its own `maxLength` holds at most 65,536 characters (Unicode
                  scalars); a `PATCH /preferences` names at most as many keys as are declared (else `422`, before
                  any key is looked at); a problem's `errors` list has at most 100 entries.
                - Text: a JSON body holding more than 30 combining marks (Unicode non-starters) in a row in any
                  string, raw or `\u`-escaped, is refused with `422` before it is parsed, and so is such a thing
                  or string preference: Unicode's stream-safe format (UAX #15). Real text never comes close, and
                  it keeps every Unicode operation on client text linear (putting a run of marks in canonical
                  order is quadratic in its length). A path segment longer than any thing or key could be names
                  none (`404`) and is not normalised.
                - Shutdown: on SIGTERM or SIGINT the server stops accepting, `/readyz` turns `503`, streams end,
                  in-flight writes finish, and the process exits with status 0 within 10 s. The deadline runs
                  outside the event loop: if draining has not finished after 9.5 s (say a request still holds
                  the loop), the process exits at once, still with status 0 — every write already answered is
                  durable; a request still unanswered then gets no answer and was not acknowledged.
                - Several instances: while the database cannot be reached, writes answer `503` with
                  `Retry-After` and change nothing, `/readyz` is `503`, reads are served from memory. When the
                  database goes back (restored from a backup, a failover that lost commits: its revision counter
                  below what an instance applied), each instance notices at its next read or write, rebuilds
                  memory from the database and sends its event streams `reset` and a snapshot; revisions then
                  continue from the database's counter.
                - Overload or shutting down: `503` with `Retry-After` (seconds) for every operation except event
                  streams, which answer `200` with a short jittered `retry:` and end at once (a browser's
                  `EventSource` gives up for good on a non-200 answer).
                - Capacity: event streams hold at most `--max-streams` descriptors (default: the descriptor
                  limit less 10%, at least 256), so reads, writes, `/healthz`, `/readyz` and `/metrics` are
                  answered with the server full of streams. Every stream's `retry:` is jittered (the base, 3 s,
                  ±50%), also the one a stream ends with when the server shuts down, so the clients of a
                  restarted instance come back spread over seconds.
                - Behind a proxy: from an address in `--trusted-proxy CIDR` (repeatable) the client is the
                  right-most address of `X-Forwarded-For` (without it, `Forwarded: for=`) that is not itself a
                  trusted proxy; from any other address these fields are ignored. Per-client limits
                  (connections, streams, stream tickets) apply to that client; a trusted proxy's own
                  connections count only against the server's total. Streams carry
                  `Cache-Control: no-cache, no-transform`; `--stream-padding BYTES` (at most 8 KiB) sends a
                  comment of that many bytes first, for proxies that hold a response's first bytes.

                ## Access

                Without `--api-token` and `--read-token` every operation is open and the `security`
                requirements below do not apply — except to web pages of other sites: a `PUT`, `PATCH`,
                `POST` or `DELETE` whose `Origin` is neither allowed by `--cors-origin` nor this server's own
                (the `Origin`'s host and port equal to `Host`) is refused with `403` (the evaluations of
                OpenFeature and `POST /stream-tickets` are reads and are not affected), whereas a request
                without `Origin` (curl, the Swift client) is served as before. With them:
                - `--api-token T`: every `PUT`, `PATCH`, `POST` and `DELETE` needs `Authorization: Bearer T`.
                  Exception: `POST /stream-tickets` only grants reading, so it is authorised like a read.
                - `--read-token R`: every other request except `/healthz`, `/readyz`, CORS preflights and the
                  dashboard page `/` (static markup without data; a browser's navigation cannot send a bearer
                  header, so the page asks for the token itself) needs `Bearer R` or `Bearer T`. With only
                  `--read-token`, writes need `Bearer R` too. `/sample/posts` is no exception; the server's own default feed fetch sends its
                  read token (or, without one, its api token). A token is never sent to a `--feed-url` upstream.
                - A missing or wrong token where one is required → `401` with `WWW-Authenticate: Bearer`.
                  Credentials sent to an operation that requires none are ignored.
                - Event streams also accept `?ticket=` from `POST /stream-tickets` (single use, 60 s) in place
                  of the header; a used, expired or unknown ticket → `401` (where a credential is required; an
                  open server ignores `ticket`). An `EventSource` that reconnects re-sends its original URL and
                  so a used ticket: a page mints a new ticket and opens a new `EventSource` with
                  `?lastEventId=` set to the last id it saw. Unused tickets are bounded: at most 64 outstanding
                  per client address (behind `--trusted-proxy`, per client the proxy names), 2,500 per
                  credential and 10,000 in all; beyond that `POST /stream-tickets` answers `503` with
                  `Retry-After`, so one reader cannot lock the others out.
                - When a request carries an `Authorization` header, that header alone decides; `ticket` is
                  consulted only on event streams without one.
                - Tokens and tickets are compared in constant time and never logged.

                ## Order of checks

                A request is answered by the first check that fails, in this order: route (`404`, `405`) →
                credentials (`401`) → resource exists (`404`, e.g. an unknown preference key) → request
                `Content-Type` (`415`) → body size (`413`) → JSON syntax and UTF-8 (`400`) → query (`400`) →
                validation (`422`) → conflict (`409`) → preconditions `If-Match` (`412`) / `If-None-Match`
                (`304`) → the change. So a request that is invalid *and* carries a stale `If-Match` is a `422`.

                ## Preference sets

                This document is generated by the running server from its declarations: every declared
                preference has its own paths (`/preferences/<key>`, `/preferences/<key>/events`) and schemas
                (`PreferenceValue.<key>`, `PreferenceRecord.<key>`, `PreferenceWrite.<key>`) with its exact
                value schema (type, `minimum`, `maximum`, `maxLength`, `enum`), and `PreferencesPatch` and
                `PreferenceMap` list every key. A server started with `--preferences FILE` serves its own.
                Preference keys match `^[A-Za-z_][A-Za-z0-9_.-]{0,63}$` and are never `events` or `schema`
                (those segments are other resources); a `--preferences` file that breaks this stops start-up.

                The preferences are also served as OpenFeature flags over OFREP 0.3.0 (`/ofrep/v1/...`, tag
                `openfeature`), for any OpenFeature provider that speaks the Remote Evaluation Protocol.

                """#)),
            ("license", .map([
                ("name", .string("MIT")),
            ])),
        ])
    }

    /// `servers`
    static func servers() -> YAMLNode {
        .sequence([
            .map([
                ("url", .string("/")),
                ("description", .string("The server this document was fetched from.")),
            ]),
        ])
    }

    /// `tags`
    static func tags() -> YAMLNode {
        .sequence([
            .map([
                ("name", .string("operations")),
                ("description", .string("Health, readiness, metrics, this contract, the dashboard.")),
            ]),
            .map([
                ("name", .string("preferences")),
                ("description", .string("Observable settings declared in one place, each with a type and a default.")),
            ]),
            .map([
                ("name", .string("things")),
                ("description", .string("An ordered list of normalised short strings (acronyms); the text is the identity.")),
            ]),
            .map([
                ("name", .string("posts")),
                ("description", .string("A feed fetched from upstream, loaded once and shared.")),
            ]),
            .map([
                ("name", .string("streams")),
                ("description", .string("Server-Sent Events. Every event is `id:` revision, `event:` name, `data:` one line of JSON.")),
            ]),
            .map([
                ("name", .string("history")),
                ("description", .string("Every change remembered: who (the credential's name), when, why (`Tidings-Reason`, taken by every write), before and after; as-of reads (`?asOf=`) and rollback. Named credentials come from `--tokens FILE` (reloaded on SIGHUP); retention is `--history-days` and `--history-bytes`.")),
            ]),
            .map([
                ("name", .string("access")),
                ("description", .string("Stream tickets for browsers.")),
            ]),
            .map([
                ("name", .string("openfeature")),
                ("description", .string("The preferences as OpenFeature flags, over the Remote Evaluation Protocol (OFREP 0.3.0).")),
            ]),
        ])
    }

    /// Top-level `security`
    static func security() -> YAMLNode {
        securityAnyOf("readToken", "apiToken")
    }
}

extension OpenAPIContract {
    /// Who may open an event stream: the read token, the api token, or a stream ticket.
    static var streamSecurity: YAMLNode {
        securityAnyOf("readToken", "apiToken", "streamTicket")
    }
}
