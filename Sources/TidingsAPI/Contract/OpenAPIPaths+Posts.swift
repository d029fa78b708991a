// The posts paths of the served contract.

extension OpenAPIContract {
    /// `/posts`
    static func pathPosts() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["posts"])),
                ("operationId", .string("getPosts")),
                ("summary", .string("The feed's state and posts; starts the first load.")),
                ("description", .string(#"""
                    If the state is `idle` this request starts the load and (without `wait`) answers `loading`.
                    `wait=N` holds the answer while the state is `loading`, until the load ends or N seconds pass;
                    when nothing is loading it answers at once. `wait` is a whole number 0..30; anything else → `400`.

                    """#)),
                ("parameters", .sequence([
                    .map([
                        ("name", .string("wait")),
                        ("in", .string("query")),
                        ("required", .boolean(false)),
                        ("description", .string("Seconds to hold the answer while loading.")),
                        ("schema", .map([
                            ("type", .string("integer")),
                            ("minimum", .integer(0)),
                            ("maximum", .integer(30)),
                            ("default", .integer(0)),
                        ])),
                    ]),
                ])),
                ("responses", .map([
                    ("200", jsonResponse(
                        "The state.",
                        schema: .ref("#/components/schemas/PostsState"),
                        links: .map([
                            ("GetFirstPost", .map([
                                ("operationId", .string("getPost")),
                                ("parameters", .map([
                                    ("id", .string("$response.body#/posts/0/id")),
                                ])),
                            ])),
                        ])
                    )),
                    ("400", shared("BadRequest")),
                    ("401", shared("Unauthorized")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/posts/{id}`
    static func pathPostsId() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["posts"])),
                ("operationId", .string("getPost")),
                ("summary", .string("One post of the loaded feed.")),
                ("description", .string(#"""
                    The percent-decoded segment is compared with each post's `id` rendered as text (integers in
                    decimal), first match in feed order. `404` when no post matches, also while nothing is loaded.
                    Never starts a load.

                    """#)),
                ("parameters", .sequence([
                    .map([
                        ("name", .string("id")),
                        ("in", .string("path")),
                        ("required", .boolean(true)),
                        ("schema", .map([
                            ("type", .string("string")),
                            ("minLength", .integer(1)),
                        ])),
                        ("examples", .map([
                            ("numeric", .map([
                                ("value", .string("1")),
                            ])),
                        ])),
                    ]),
                ])),
                ("responses", .map([
                    ("200", jsonResponse(
                        "The post, exactly as the upstream sent it (extra members kept).",
                        schema: .ref("#/components/schemas/Post")
                    )),
                    ("401", shared("Unauthorized")),
                    ("404", shared("NotFound")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/posts/refresh`
    static func pathPostsRefresh() -> YAMLNode {
        .map([
            ("post", .map([
                ("tags", .strings(["posts"])),
                ("operationId", .string("refreshPosts")),
                ("summary", .string("Start a load (or join the running one).")),
                ("description", .string("No request body. One upstream request however many callers; the answer is the state after starting (normally `loading`).")),
                ("security", securityAnyOf("apiToken")),
                ("responses", .map([
                    ("202", jsonResponse(
                        "A load is running.",
                        schema: .ref("#/components/schemas/PostsState"),
                        links: .map([
                            ("GetPostsAfterRefresh", .map([
                                ("operationId", .string("getPosts")),
                            ])),
                        ])
                    )),
                    ("401", shared("Unauthorized")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/posts/cancel`
    static func pathPostsCancel() -> YAMLNode {
        .map([
            ("post", .map([
                ("tags", .strings(["posts"])),
                ("operationId", .string("cancelPosts")),
                ("summary", .string("Abandon a running load.")),
                ("description", .string("No request body. The state returns to `loaded` (previous posts kept) or `idle`. `cancelled` is false when nothing was loading.")),
                ("security", securityAnyOf("apiToken")),
                ("responses", .map([
                    ("200", jsonResponse(
                        "Whether a load was cancelled.",
                        schema: .ref("#/components/schemas/CancelResult")
                    )),
                    ("401", shared("Unauthorized")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/posts/events`
    static func pathPostsEvents() -> YAMLNode {
        streamOperation(
            tags: ["streams", "posts"],
            operationId: "streamPosts",
            summary: "Event stream of the feed state.",
            description: "Emits `posts` (and `reset`) events, each the same object as `GET /posts`. Opening it does not start a load."
        )
    }

    /// `/sample/posts`
    static func pathSamplePosts() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["posts"])),
                ("operationId", .string("getSamplePosts")),
                ("summary", .string("The fixed sample feed shipped in the binary (the default upstream).")),
                ("responses", .map([
                    ("200", jsonResponse(
                        "A JSON array of posts.",
                        schema: .map([
                            ("type", .string("array")),
                            ("items", .ref("#/components/schemas/Post")),
                        ])
                    )),
                    ("401", shared("Unauthorized")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }
}
