// The operations paths of the served contract.

extension OpenAPIContract {
    /// `/healthz`
    static func pathHealthz() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["operations"])),
                ("operationId", .string("getHealth")),
                ("summary", .string("Liveness; 200 while the process serves.")),
                ("security", .strings([])),
                ("responses", .map([
                    ("200", jsonResponse(
                        "The process serves requests.",
                        schema: .ref("#/components/schemas/Health"),
                        example: .map([
                            ("status", .string("ok")),
                        ])
                    )),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/readyz`
    static func pathReadyz() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["operations"])),
                ("operationId", .string("getReadiness")),
                ("summary", .string("Readiness; 503 while starting or draining.")),
                ("security", .strings([])),
                ("responses", .map([
                    ("200", jsonResponse(
                        "Ready to serve traffic.",
                        schema: .ref("#/components/schemas/Health"),
                        example: .map([
                            ("status", .string("ready")),
                        ])
                    )),
                    ("503", .map([
                        ("description", .string("Starting up or draining (after SIGTERM/SIGINT). `Retry-After` is present while starting.")),
                        ("headers", .map([
                            revisionHeader,
                            ("Retry-After", .map([
                                ("description", .string("Seconds after which to ask again (while starting).")),
                                ("schema", .map([
                                    ("type", .string("string")),
                                    ("pattern", .string("^[0-9]+$")),
                                ])),
                            ])),
                        ])),
                        ("content", .map([
                            ("application/problem+json", .map([
                                ("schema", .ref("#/components/schemas/Problem")),
                            ])),
                        ])),
                    ])),
                ])),
            ])),
        ])
    }

    /// `/metrics`
    static func pathMetrics() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["operations"])),
                ("operationId", .string("getMetrics")),
                ("summary", .string("Prometheus text exposition.")),
                ("description", .string(#"""
                    Prometheus text format 0.0.4: requests by route (the route template, e.g.
                    `/preferences/{key}`, never the raw path) and status, request latency histograms, open event
                    streams, events published, upstream fetches by outcome, store write latency.

                    """#)),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("Metrics.")),
                        ("headers", .map([
                            revisionHeader,
                        ])),
                        ("content", .map([
                            ("text/plain", .map([
                                ("schema", .map([
                                    ("type", .string("string")),
                                ])),
                            ])),
                        ])),
                    ])),
                    ("401", shared("Unauthorized")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/openapi.yaml`
    static func pathOpenapiYaml() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["operations"])),
                ("operationId", .string("getOpenAPI")),
                ("summary", .string("This document.")),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("The contract, byte for byte as in the repository's `openapi.yaml`.")),
                        ("headers", .map([
                            revisionHeader,
                        ])),
                        ("content", .map([
                            ("application/yaml", .map([
                                ("schema", .map([
                                    ("type", .string("object")),
                                    ("description", .string("An OpenAPI 3.1 document (this one).")),
                                    ("required", .strings(["openapi", "info", "paths"])),
                                    ("properties", .map([
                                        ("openapi", .map([
                                            ("type", .string("string")),
                                            ("pattern", .string(#"^3\.1\."#)),
                                        ])),
                                    ])),
                                ])),
                            ])),
                        ])),
                    ])),
                    ("401", shared("Unauthorized")),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }

    /// `/`
    static func pathDashboard() -> YAMLNode {
        .map([
            ("get", .map([
                ("tags", .strings(["operations"])),
                ("operationId", .string("getDashboard")),
                ("summary", .string("The dashboard page (live preferences, things and posts over one event stream).")),
                ("description", .string("Static markup without data, open like the probes; the page asks for a token when the API answers 401.")),
                ("security", .strings([])),
                ("responses", .map([
                    ("200", .map([
                        ("description", .string("HTML page.")),
                        ("headers", .map([
                            revisionHeader,
                        ])),
                        ("content", .map([
                            ("text/html", .map([
                                ("schema", .map([
                                    ("type", .string("string")),
                                ])),
                            ])),
                        ])),
                    ])),
                    ("503", shared("ServiceUnavailable")),
                ])),
            ])),
        ])
    }
}
