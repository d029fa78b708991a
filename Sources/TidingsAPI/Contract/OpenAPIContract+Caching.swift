// API.md "Caching and compression" in the served contract: applied to the finished tree, so every
// operation — also ones added later — is described the way `HTTPCaching` answers it.

extension OpenAPIContract {
    /// `document` with validators, conditional answers, `Cache-Control`, `Vary` and
    /// `Content-Encoding` on every operation they apply to, the shared headers and parameters
    /// they name, and the section of `info.description` that explains them.
    static func applyingCaching(to document: YAMLNode) -> YAMLNode {
        guard let paths = document["paths"], case let .mapping(items) = paths,
              let components = document["components"] else { return document }
        var cachedPaths: [YAMLNode.Member] = []
        for item in items {
            var pathItem = item.value
            guard case let .mapping(operations) = pathItem else { cachedPaths.append(item); continue }
            for operation in operations where ["get", "put", "post", "patch", "delete"].contains(operation.key) {
                pathItem = pathItem.setting(operation.key, cachingOperation(operation.value, method: operation.key, path: item.key))
            }
            cachedPaths.append(YAMLNode.Member(key: item.key, value: pathItem))
        }
        var headers = components["headers"] ?? .map([])
        for (name, header) in cachingHeaders() { headers = headers.setting(name, header) }
        var parameters = components["parameters"] ?? .map([])
        parameters = parameters.setting("IfMatchRead", ifMatchReadParameter())
        var responses = components["responses"] ?? .map([])
        if case let .mapping(members) = responses {
            for member in members { responses = responses.setting(member.key, codedResponse(member.value, read: false)) }
        }
        responses = responses
            .setting("NotModified", notModifiedResponse())
            .setting("ReadPreconditionFailed", problemResponse(
                "`If-Match` (strong comparison) names no current representation of this resource.",
                headers: [("ETag", .ref("#/components/headers/AnyETag"))]))
        let cachedComponents = components
            .setting("headers", headers)
            .setting("parameters", parameters)
            .setting("responses", responses)
        var cached = document.setting("paths", .mapping(cachedPaths)).setting("components", cachedComponents)
        if let info = document["info"], case let .string(description)? = info["description"] {
            cached = cached.setting("info", info.setting("description", .string(description + cachingDescription)))
        }
        return cached
    }

    /// One operation: every answer with a body says how it is coded; a `GET` (not a stream)
    /// also gets its validator, `Cache-Control`, the conditional parameters and `304`/`412`.
    private static func cachingOperation(_ operation: YAMLNode, method: String, path: String) -> YAMLNode {
        guard case let .mapping(responseMembers)? = operation["responses"] else { return operation }
        let isStream = responseMembers.contains { isEventStream($0.value) }
        let isRead = method == "get" && !isStream
        var responses = YAMLNode.map([])
        for member in responseMembers {
            var response = codedResponse(member.value, read: isRead)
            if isRead, member.key == "200" {
                let etag = path == "/posts" ? "AnyETag" : "ContentETag"
                response = addingHeader("ETag", .ref("#/components/headers/" + etag), to: response, replace: false)
            }
            responses = responses.setting(member.key, response)
        }
        var cached = operation
        if isRead {
            responses = responses.setting("304", shared("NotModified"))
            if responses["412"] == nil { responses = responses.setting("412", shared("ReadPreconditionFailed")) }
            var parameters: [YAMLNode] = []
            if case let .sequence(existing)? = operation["parameters"] { parameters = existing }
            let ifNoneMatch = YAMLNode.ref("#/components/parameters/IfNoneMatch")
            if !parameters.contains(ifNoneMatch) { parameters.append(ifNoneMatch) }
            parameters.append(.ref("#/components/parameters/IfMatchRead"))
            cached = cached["parameters"] == nil
                ? cached.inserting("parameters", .sequence(parameters), before: "responses")
                : cached.setting("parameters", .sequence(parameters))
        }
        return cached.setting("responses", responses)
    }

    /// A response as coded: `Vary` and `Content-Encoding` when it has a compressible body (every
    /// body the API sends), `Cache-Control` on a read's.
    private static func codedResponse(_ response: YAMLNode, read: Bool) -> YAMLNode {
        guard case .mapping? = response["content"] else { return response }
        var coded = response
        if read { coded = addingHeader("Cache-Control", .ref("#/components/headers/CacheControl"), to: coded, replace: false) }
        coded = addingHeader("Vary", .ref("#/components/headers/Vary"), to: coded, replace: true)
        coded = addingHeader("Content-Encoding", .ref("#/components/headers/ContentEncoding"), to: coded, replace: true)
        // A revision tag may be the gzip representation's.
        return coded
    }

    private static func isEventStream(_ response: YAMLNode) -> Bool {
        if case let .string(ref)? = response["$ref"] { return ref.contains("EventStream") }
        return response["content"]?["text/event-stream"] != nil
    }

    private static func addingHeader(_ name: String, _ header: YAMLNode, to response: YAMLNode, replace: Bool) -> YAMLNode {
        let headers = response["headers"] ?? .map([])
        if !replace, headers[name] != nil { return response }
        return response.setting("headers", headers.setting(name, header))
    }

    /// `components.headers` members (`ETag` replaced: a revision tag may carry `-gzip`).
    private static func cachingHeaders() -> [(String, YAMLNode)] {
        func header(_ description: String, required: Bool, schema: YAMLNode) -> YAMLNode {
            .map([("description", .string(description)), ("required", .boolean(required)), ("schema", schema)])
        }
        func pattern(_ text: String) -> YAMLNode { .map([("type", .string("string")), ("pattern", .string(text))]) }
        return [
            ("ETag", header(#"The resource's revision, quoted (strong validator), e.g. `"42"`; the coded representations' tags are `"42-gzip"` and `"42-br"`."#,
                            required: true, schema: pattern(#"^"[0-9]{1,20}(-gzip|-br)?"$"#))),
            ("ContentETag", header(#"A strong validator: the revision of the resource (`"42"`) or, for answers without one, a hash of the content (`"9f2c0e3d5a1b7c44"`); `-gzip` / `-br` for the coded representations."#,
                                   required: true, schema: pattern(#"^"([0-9]{1,20}|[0-9a-f]{16})(-gzip|-br)?"$"#))),
            ("AnyETag", header(#"A strong validator: a revision (`"42"`) or a content hash (`"9f2c0e3d5a1b7c44"`), `-gzip` / `-br` for the coded representations."#,
                               required: true, schema: pattern(#"^"([0-9]{1,20}|[0-9a-f]{16})(-gzip|-br)?"$"#))),
            ("CacheControl", header("`no-cache` (revalidate with the `ETag` before reuse); `no-store` on `/metrics`.",
                                    required: true, schema: .map([("type", .string("string"))]))),
            ("Vary", header("Names `Accept-Encoding` (and `Origin` when CORS echoes one).",
                            required: true, schema: pattern("Accept-Encoding"))),
            ("ContentEncoding", header("`br` or `gzip`, whichever the request's `Accept-Encoding` prefers, when the body is over 1 KiB (or identity was refused); absent otherwise. Event streams: `gzip` whenever the request accepts it.",
                                       required: false, schema: .map([("type", .string("string")), ("enum", .strings(["gzip", "br"]))]))),
        ]
    }

    private static func ifMatchReadParameter() -> YAMLNode {
        .map([
            ("name", .string("If-Match")),
            ("in", .string("header")),
            ("required", .boolean(false)),
            ("description", .string("A list of entity tags (strong comparison) or `*`; when none is the current `ETag` → `412`.")),
            ("schema", .map([("type", .string("string"))])),
        ])
    }

    private static func notModifiedResponse() -> YAMLNode {
        .map([
            ("description", .string("`If-None-Match` matched the current `ETag` (or `If-Modified-Since` is not older than `Last-Modified`). No body; the fields a `200` would carry: the validator, `Cache-Control`, `Vary`.")),
            ("headers", .map([
                revisionHeader,
                ("ETag", .ref("#/components/headers/AnyETag")),
                ("Cache-Control", .ref("#/components/headers/CacheControl")),
            ])),
        ])
    }

    private static let cachingDescription = #"""

        ## Caching and compression

        - Every `GET` answers with a strong validator: resources by revision (`/preferences` and
          `/things`: the revision of the latest change they contain; `/preferences/{key}` its own;
          `/posts` its stored document's revision while it shows that document), the contract, the
          declarations, the dashboard, the sample feed and every other answer by a hash of the
          content. `If-None-Match` (weak comparison, lists, `*`) → `304` with the `200`'s validator,
          `Cache-Control` and `Vary`; `If-Match` on a read compares strongly → `412` when nothing
          matches; without `If-None-Match`, `If-Modified-Since` is honoured where `Last-Modified` is
          sent. `HEAD` carries exactly `GET`'s fields. `POST /ofrep/v1/evaluate/flags` revalidates
          with `If-None-Match` as OFREP asks.
        - `Cache-Control: no-cache` on every read (a cache must revalidate a live setting; the fixed
          answers revalidate cheaply with their strong tag); `no-store` on `/metrics`.
        - Compression: `br` or `gzip`, whichever `Accept-Encoding` prefers (`q` values honoured, `br`
          on a tie, `gzip;q=0`, `identity;q=0`, `*`), when the body is over 1 KiB or identity was
          refused. Every answer of a compressible type carries `Vary: Accept-Encoding`, compressed or
          not. Each coded representation has its own tag (`"42"` → `"42-gzip"`, `"42-br"`); a write's
          `If-Match` accepts any of them.
        - Event streams are gzip when the request accepts it (`Content-Encoding: gzip`,
          `Vary: Accept-Encoding`): every event is flushed as it is sent, so a client decodes each
          one as it arrives (`curl --compressed -N`, a browser's `EventSource`); each event is
          deflated once and shared by every gzip subscriber. Snapshot, replay, heartbeats, resume,
          conflation and `reset` are as on an identity stream (the slow-reader bound counts the
          bytes on the wire), and a clean end closes the gzip member (final block and trailer).

        """#
}

extension YAMLNode {
    /// This mapping with `key` inserted before `next` (appended when `next` is missing).
    func inserting(_ key: String, _ value: YAMLNode, before next: String) -> YAMLNode {
        guard case var .mapping(members) = self else { return self }
        let index = members.firstIndex { $0.key == next } ?? members.count
        members.insert(Member(key: key, value: value), at: index)
        return .mapping(members)
    }
}
