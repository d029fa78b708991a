// API.md "Caching and compression" as a rule over an operation: what `HTTPCaching` adds to every
// answer. Every operation of `openapi.base.yaml` is written with it already (OpenAPIBaseTests
// holds the file to the rule); the generated per-key paths get it here.

extension OpenAPIContract {
    /// `pathItem` with validators, conditional answers, `Cache-Control`, `Vary` and
    /// `Content-Encoding` on every operation they apply to (the names they use are in the base's
    /// `components`). Applying it twice changes nothing.
    static func applyingCaching(toPathItem pathItem: YAMLNode, path: String) -> YAMLNode {
        guard case let .mapping(operations) = pathItem else { return pathItem }
        var cached = pathItem
        for operation in operations where ["get", "put", "post", "patch", "delete"].contains(operation.key) {
            cached = cached.setting(operation.key, cachingOperation(operation.value, method: operation.key, path: path))
        }
        return cached
    }

    /// One operation: every answer with a body says how it is coded; a `GET` (not a stream)
    /// also gets its validator, `Cache-Control`, the conditional parameters and `304`/`412`.
    static func cachingOperation(_ operation: YAMLNode, method: String, path: String) -> YAMLNode {
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
            let ifMatch = YAMLNode.ref("#/components/parameters/IfMatchRead")
            if !parameters.contains(ifMatch) { parameters.append(ifMatch) }
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
        // A response that varies on more than the coding (export also names `Accept`) keeps its own.
        coded = addingHeader("Vary", .ref("#/components/headers/Vary"), to: coded, replace: false)
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
