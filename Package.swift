// swift-tools-version:6.0
import PackageDescription

// Package-wide settings, applied to every Swift target at the end of this file: Swift 6 language
// mode everywhere, plus the upcoming features swift-log and swift-nio use, so `any` is spelled
// out, an import is internal unless a file says `public import` (the public API names what it
// exposes), and a file imports every module whose members it uses.
let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Tidings",
    platforms: [.macOS(.v15)],  // Synchronization's Mutex and Atomic
    products: [
        .executable(name: "tidings", targets: ["tidings"]),
        .library(name: "Observing", targets: ["Observing"]),
        .library(name: "TidingsModel", targets: ["TidingsModel"]),
        .library(name: "EventHTTP", targets: ["EventHTTP"]),
        .library(name: "TidingsClient", targets: ["TidingsClient"]),
        .executable(name: "tidings-client", targets: ["tidings-client"]),
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", exact: "0.14.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", exact: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/apple/swift-http-types.git", exact: "1.8.0"),
        .package(url: "https://github.com/jpsim/Yams.git", exact: "6.2.2"),
        // HMAC-SHA256 of webhook signatures and the SHA-256 of `--tokens` digests.
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "3.12.3"),
    ],
    targets: [
        // C: libevent (+ its pthreads glue) through pkg-config; one shim header.
        .systemLibrary(
            name: "CLibevent",
            pkgConfig: "libevent_pthreads",
            providers: [.apt(["libevent-dev"])]
        ),
        // C: the system zlib (gzip answers and compressed event streams); one shim header.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // C: Google's Brotli encoder and decoder (`br` answers); one shim header.
        .systemLibrary(
            name: "CBrotli",
            pkgConfig: "libbrotlienc",
            providers: [.apt(["libbrotli-dev"])]
        ),
        // C: the system libcurl (the posts feed's upstream client); one shim header.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Swift over evhttp. No domain words.
        .target(
            name: "EventHTTP",
            dependencies: [
                "CLibevent", "CZlib", "CBrotli",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The observation library: wrappers, preferences, per-key subjects, environment,
        // data loader, thing store. Reusable, with no Tidings rules. No HTTP, no libevent, no SQL.
        .target(
            name: "Observing",
            dependencies: [.product(name: "OpenCombine", package: "OpenCombine")]
        ),
        // Tidings' own rules over the library: the built-in preferences, the acronym rules and
        // text case.
        .target(
            name: "TidingsModel",
            dependencies: ["Observing", .product(name: "OpenCombine", package: "OpenCombine")]
        ),
        // Durable storage (SQLite through GRDB, WAL mode; or PostgreSQL through postgres-nio).
        .target(
            name: "TidingsStore",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                // SQLite's C API for the WAL hook (WALCheckpointer), which GRDB does not wrap.
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The resources: routes <-> domain, JSON, problem details, stream topics.
        .target(
            name: "TidingsAPI",
            dependencies: [
                "EventHTTP", "Observing", "TidingsModel", "TidingsStore", "CCurl",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            // The dashboard's HTML, CSS and JavaScript and the sample feed, read at start-up from
            // the bundle SwiftPM puts next to the executable (the Dockerfile copies it there too).
            // The contract's fixed part is compiled in (`PackageResources.openapi_base_yaml`).
            resources: [
                .process("Dashboard/Resources"), .process("Posts/Resources"),
                .embedInCode("Contract/openapi.base.yaml"),
            ],
            // The upstream feed client runs on libcurl (CCurl); a build with the static Swift
            // runtime (as in the container) links it explicitly.
            linkerSettings: [.linkedLibrary("curl", .when(platforms: [.linux]))]
        ),
        // The executable: configuration, logging, signals, wiring.
        .executableTarget(
            name: "tidings",
            dependencies: [
                "TidingsAPI", "TidingsModel", "EventHTTP",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The Swift client: the observation library's containers and wrappers over a live
        // server (URLSession + one event stream). No libevent, no server modules.
        .target(
            name: "TidingsClient",
            dependencies: ["Observing", .product(name: "OpenCombine", package: "OpenCombine")],
            linkerSettings: [.linkedLibrary("curl", .when(platforms: [.linux]))]
        ),
        // `tidings-client get|set|watch`, built on TidingsClient as its example.
        .executableTarget(
            name: "tidings-client",
            dependencies: [
                "TidingsClient", "Observing",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        // Benchmark program for the observation library (run by `make bench`).
        .executableTarget(
            name: "ObservingBench",
            dependencies: ["Observing"],
            path: "Benchmarks/ObservingBench"
        ),

        // Commit throughput of the PostgreSQL store on a throwaway cluster (PostgresStore).
        .executableTarget(
            name: "PostgresStoreBench",
            dependencies: ["TidingsStore", "TestFixtures", .product(name: "Logging", package: "swift-log")],
            path: "Benchmarks/PostgresStoreBench"
        ),

        .testTarget(name: "EventHTTPTests", dependencies: ["EventHTTP", "TestFixtures", .product(name: "HTTPTypes", package: "swift-http-types")]),
        .testTarget(name: "ObservingTests", dependencies: ["Observing", "TestFixtures", .product(name: "OpenCombine", package: "OpenCombine")]),
        .testTarget(name: "TidingsStoreTests", dependencies: ["TidingsStore", "TestFixtures", "store-crash-writer"]),
        // The writer CrashRecoveryTests kills with SIGKILL mid-load (a program, not a test).
        .executableTarget(name: "store-crash-writer", dependencies: ["TidingsStore"], path: "Tests/StoreCrashWriter"),
        .testTarget(name: "TidingsModelTests", dependencies: ["TidingsModel", "Observing", .product(name: "OpenCombine", package: "OpenCombine")]),
        // The API's logic in-process: the change path, the write pipeline; no binary, no port.
        .testTarget(name: "TidingsAPITests", dependencies: [
            "TidingsAPI", "TidingsModel", "TidingsStore", "Observing", "EventHTTP", "TestFixtures", "TidingsTesting",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // Throwaway PostgreSQL clusters and nginx balancers for tests (Foundation only, no XCTest):
        // any test target may depend on it.
        .target(name: "TestFixtures", path: "Tests/TestFixtures"),
        // The tests' one API to a Tidings server with two transports: in-process through the real
        // application, router and middleware over a SQLite file (no socket), and live (TestFixtures'
        // launcher and client). Links the server's modules, so only test targets depend on it.
        .target(name: "TidingsTesting", dependencies: [
            "TidingsAPI", "EventHTTP", "TestFixtures", "CZlib", "CBrotli",
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "Logging", package: "swift-log"),
        ], path: "Tests/TidingsTesting"),
        .testTarget(name: "TestFixturesTests", dependencies: ["TestFixtures"]),
        // PostgresStore against a real PostgreSQL started by the test.
        .testTarget(
            name: "PostgresStoreTests",
            dependencies: [
                "TidingsStore", "TestFixtures",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Starts the real `tidings` binary on an ephemeral port and talks real HTTP to it.
        .testTarget(name: "EndToEndTests", dependencies: ["tidings", "TestFixtures", "TidingsTesting", "CZlib", "CBrotli",
                                                    .product(name: "Crypto", package: "swift-crypto")]),
        // The client against the real `tidings` and `tidings-client` binaries on loopback.
        .testTarget(
            name: "TidingsClientTests",
            dependencies: ["TidingsClient", "Observing", "tidings", "tidings-client", "TestFixtures",
                           .product(name: "OpenCombine", package: "OpenCombine")]
        ),
    ]
)

// Every Swift target (sources, tests, benchmarks) builds with the same settings.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + strictSettings
}

// The server's request path in release builds: no run-time exclusivity checks (about 1.2K
// instructions per request: a `swift_beginAccess` per access to a class's stored `var`). Debug
// builds — every test run — keep them, so an overlapping access still fails a test. Not on the
// library products (Observing, TidingsModel, TidingsClient): packages that depend on them by
// version may not carry unsafe flags.
for target in package.targets where ["EventHTTP", "TidingsAPI", "TidingsStore", "tidings"].contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? [])
        + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
}
