// API.md "Environments" in the served contract: every path of one environment's resources exists
// once more under `/environments/{env}` — one parameterised family with a shared `env` path
// parameter, not a copy per environment — and every operation a credential limited to some
// environments can be refused answers `403`.

extension OpenAPIContract {
    /// The unprefixed paths whose resources belong to one environment, by their first segments:
    /// a path is one of them when it is one of these or lies below one. `EnvironmentRoutes`
    /// installs their routes per environment (and the access routes `/stream-tickets`);
    /// `EnvironmentContractRoutesTests` holds the two together.
    static let environmentScopedRoots = ["/preferences", "/things", "/history", "/export", "/apply", "/schedules", "/posts",
                                         "/events", "/stream-tickets", "/ofrep"]

    /// The path parameter every path of the family starts with.
    static let environmentParameter = YAMLNode.ref("#/components/parameters/Environment")

    static func isEnvironmentScoped(_ path: String) -> Bool {
        environmentScopedRoots.contains { path == $0 || path.hasPrefix($0 + "/") }
    }

    /// `paths` with `403` on every operation that an environment-limited credential can be
    /// refused (all that take a credential but the environment-free ones, see `AccessCheck`),
    /// and after them the `/environments/{env}` family of the environment-scoped ones.
    static func addingEnvironments(to paths: YAMLNode) -> YAMLNode {
        guard case let .mapping(members) = paths else { return paths }
        let guarded = members.map { member in
            AccessCheck.environmentFree.contains(member.key)
                ? member : YAMLNode.Member(key: member.key, value: forEachOperation(member.value, addingForbidden))
        }
        let family = guarded.filter { isEnvironmentScoped($0.key) }.map { member in
            YAMLNode.Member(key: EnvironmentRoutes.prefix + member.key, value: underEnvironment(member.value))
        }
        return .mapping(guarded + family)
    }

    /// One path item as it is under the prefix: the `env` parameter, operation ids of their own,
    /// `404` for an unknown environment, and the links and `Location`s of the same environment.
    static func underEnvironment(_ pathItem: YAMLNode) -> YAMLNode {
        var item = forEachOperation(pathItem) { operation in
            var moved = operation
            if case let .string(id)? = operation["operationId"] { moved = moved.setting("operationId", .string(familyId(id))) }
            if case let .sequence(tags)? = operation["tags"] { moved = moved.setting("tags", .sequence(tags + [.string("environments")])) }
            guard case let .mapping(responses)? = operation["responses"] else { return moved }
            var answers = YAMLNode.mapping(responses.map { .init(key: $0.key, value: underEnvironment(response: $0.value)) })
            answers = answers["404"].map { answers.setting("404", unknownEnvironmentToo($0)) }
                ?? answers.inserting("404", shared("NotFound"), after: "403")
            return moved.setting("responses", answers)
        }
        var parameters = [environmentParameter]
        if case let .sequence(existing)? = item["parameters"] { parameters += existing }
        item = item["parameters"] == nil
            ? item.inserting("parameters", .sequence(parameters), before: item.firstKey ?? "")
            : item.setting("parameters", .sequence(parameters))
        return item
    }

    /// The family's operation id for an unprefixed operation's.
    static func familyId(_ id: String) -> String { "environment." + id }

    private static func forEachOperation(_ pathItem: YAMLNode, _ change: (YAMLNode) -> YAMLNode) -> YAMLNode {
        guard case let .mapping(members) = pathItem else { return pathItem }
        return .mapping(members.map { member in
            ["get", "put", "post", "patch", "delete"].contains(member.key) ? .init(key: member.key, value: change(member.value)) : member
        })
    }

    /// `403` after `401` on an operation that answers `401` (it takes a credential).
    private static func addingForbidden(_ operation: YAMLNode) -> YAMLNode {
        guard let responses = operation["responses"], responses["401"] != nil, responses["403"] == nil else { return operation }
        return operation.setting("responses", responses.inserting("403", shared("Forbidden"), after: "401"))
    }

    /// A response's links to the same environment's operations, and its `Location` under the prefix.
    private static func underEnvironment(response: YAMLNode) -> YAMLNode {
        var moved = response
        if case let .mapping(links)? = response["links"] {
            moved = moved.setting("links", .mapping(links.map { link in
                var value = link.value
                if case let .string(id)? = value["operationId"] { value = value.setting("operationId", .string(familyId(id))) }
                let parameters = (value["parameters"] ?? .map([])).setting("env", .string("$request.path.env"))
                return .init(key: link.key, value: value.setting("parameters", parameters))
            }))
        }
        if case let .string(pattern)? = response["headers"]?["Location"]?["schema"]?["pattern"], pattern.hasPrefix("^/") {
            let prefixed = "^/environments/[a-z][a-z0-9-]{0,31}/" + pattern.dropFirst(2)
            moved = moved.filling(["headers", "Location", "schema", "pattern"], with: .string(prefixed))
        }
        return moved
    }

    /// A `404` of the operation's own (OFREP's `FLAG_NOT_FOUND`) that may also be the problem
    /// details of an unknown environment.
    private static func unknownEnvironmentToo(_ response: YAMLNode) -> YAMLNode {
        guard case let .mapping(content)? = response["content"],
              !content.contains(where: { $0.key == "application/problem+json" }) else { return response }
        let problem = YAMLNode.map([("schema", .ref("#/components/schemas/Problem"))])
        var answer = response.setting("content", .mapping(content + [.init(key: "application/problem+json", value: problem)]))
        if case let .string(description)? = response["description"] {
            answer = answer.setting("description", .string(description + " Or no such environment (problem details)."))
        }
        return answer
    }
}

extension YAMLNode {
    /// This mapping with `key` inserted right after `previous` (appended when `previous` is missing).
    func inserting(_ key: String, _ value: YAMLNode, after previous: String) -> YAMLNode {
        guard case var .mapping(members) = self else { return self }
        let index = members.firstIndex { $0.key == previous }.map { $0 + 1 } ?? members.count
        members.insert(Member(key: key, value: value), at: index)
        return .mapping(members)
    }

    /// The first key of a mapping.
    var firstKey: String? {
        guard case let .mapping(members) = self else { return nil }
        return members.first?.key
    }
}
