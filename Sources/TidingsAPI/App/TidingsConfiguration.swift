public import EventHTTP
import Foundation
public import TidingsModel

/// Every setting of the `tidings` executable (openapi.yaml "Running"), with its defaults.
/// Built by the command line (flags, then `TIDINGS_*` environment variables).
public struct TidingsConfiguration: Sendable, Equatable {
    /// `--host`: address to listen on.
    public var host = "127.0.0.1"
    /// `--port`: 0 picks a free port (printed in the listening line).
    public var port = 8080
    /// `--data-dir`: where the embedded store lives; created if missing.
    public var dataDir = "./tidings-data"
    /// `--feed-url`: upstream posts feed; nil = the server's own `GET /sample/posts`.
    public var feedURL: String?
    /// `--feed-refresh`: seconds between background refreshes once loaded; 0 = never.
    public var feedRefresh: Double = 300
    /// `--feed-timeout`: seconds before an upstream fetch is abandoned.
    public var feedTimeout: Double = 10
    /// `--feed-proxy`: the proxy feed requests go through; nil = none (`http_proxy` and the
    /// like in the environment are ignored).
    public var feedProxy: String?
    /// `--preferences`: a JSON schema file replacing the built-in preference set.
    public var preferencesFile: String?
    /// `--text-case`: how incoming things (acronyms) are normalised.
    public var textCase: TextCase = .upper
    /// `--api-token` (repeatable): bearer tokens allowed to write.
    public var apiTokens: [String] = []
    /// `--read-token`: bearer token required to read (when set).
    public var readToken: String?
    /// `--cors-origin` (repeatable, or `*`).
    public var corsOrigins: [String] = []
    /// `--heartbeat`: seconds between `: keep-alive` comments on event streams.
    public var heartbeat: Double = 15
    /// `--replay-buffer`: events kept for `Last-Event-ID` resume.
    public var replayBuffer = 10_000
    /// `--replay-bytes`: bytes of event history kept for resume (whichever bound is reached first).
    public var replayBytes = 64 << 20
    /// `--database-url`: `postgres://user:password@host:port/database`; nil = SQLite under `dataDir`.
    public var databaseURL: String?
    /// `--database-commit-lanes`: group-commit transactions one instance keeps in flight on
    /// PostgreSQL, each on a connection of its own (``PostgresStoreOptions/commitLanes``).
    public var databaseCommitLanes = 1
    /// `--header-timeout`: seconds from a request head's first byte until it must be complete.
    public var headerTimeout: Double = 10
    /// `--body-timeout`: seconds from a request head's end until its whole body must be in.
    public var bodyTimeout: Double = 30
    /// `--max-connections-per-client`: open connections one client address may hold.
    public var maxConnectionsPerClient = 512
    /// `--stream-workers`: threads writing event streams; 0 = one per core but one (at least one).
    public var streamWorkers = 0
    /// `--tokens`: a JSON file of named credentials (`[{"name", "role", "token" | "sha256"}]`),
    /// reloaded on SIGHUP.
    public var tokensFile: String?
    /// `--history-days`: change records older than this are dropped (fractions allowed).
    public var historyDays: Double = 30
    /// `--history-bytes`: change records beyond this many bytes are dropped, oldest first.
    public var historyBytes = 256 << 20
    /// `--trusted-proxy` (repeatable): proxies whose `X-Forwarded-For` names the client.
    public var trustedProxies: [String] = []
    /// `--max-environments`: environments that may exist at once, `default` included (API.md "Environments").
    public var maxEnvironments = 64
    /// `--max-streams`: event streams open at once; nil = the descriptor limit less 10% (≥ 256).
    public var maxStreams: Int?
    /// `--stream-padding`: bytes of comment sent first on every stream (0...8192).
    public var streamPadding = 0
    /// `--log-level`: trace, debug, info, notice, warning, error, critical.
    public var logLevel = "info"
    /// `--webhooks`: a JSON file of webhooks (`[{"name", "url", "secret", "topics"?, "keys"?,
    /// "environments"?}]`), reloaded on SIGHUP.
    public var webhooksFile: String?
    /// `--webhook-allow-private`: webhooks may be delivered to loopback, private and link-local addresses.
    public var webhookAllowPrivate = false

    public init() {}

    /// The HTTP layer's settings derived from this configuration (limits keep their defaults).
    public var server: ServerConfiguration {
        var server = ServerConfiguration(host: host, port: port)
        server.heartbeatInterval = heartbeat
        server.headerTimeout = headerTimeout
        server.bodyTimeout = bodyTimeout
        server.maxConnectionsPerClient = maxConnectionsPerClient
        server.streamWorkers = streamWorkers
        server.maxStreams = maxStreams
        server.streamPadding = streamPadding
        // Validated by the command line; a range that does not parse is left out here.
        server.trustedProxies = (try? TrustedProxies(trustedProxies)) ?? TrustedProxies()
        return server
    }

    /// The base URL the server answers on, for a given bound port (IPv6 hosts bracketed).
    public func baseURL(port: Int) -> String {
        let printableHost = host.contains(":") ? "[\(host)]" : host
        return "http://\(printableHost):\(port)"
    }
}
