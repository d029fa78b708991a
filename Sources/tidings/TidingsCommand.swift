import ArgumentParser
import Foundation
import Logging
import TidingsAPI
import TidingsModel
import EventHTTP

/// The command line of openapi.yaml. Every flag may also come from `TIDINGS_<FLAG>` (upper snake
/// case; repeatable flags take a comma-separated list there); a flag on the command line wins.
struct TidingsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tidings",
        abstract: "Observable preferences, things and posts over HTTP JSON and Server-Sent Events."
    )

    @Option(help: "Address to listen on (default 127.0.0.1). Env: TIDINGS_HOST")
    var host: String?
    @Option(help: "Port (default 8080; 0 picks a free port and prints it). Env: TIDINGS_PORT")
    var port: Int?
    @Option(name: .customLong("data-dir"), help: "Directory of the embedded store; created if missing. Env: TIDINGS_DATA_DIR")
    var dataDir: String?
    @Option(name: .customLong("feed-url"), help: "Upstream posts feed (default: the built-in sample feed). Env: TIDINGS_FEED_URL")
    var feedURL: String?
    @Option(name: .customLong("feed-refresh"), help: "Seconds between feed refreshes once loaded; 0 = never (default 300). Env: TIDINGS_FEED_REFRESH")
    var feedRefresh: Double?
    @Option(name: .customLong("feed-timeout"), help: "Seconds before an upstream fetch is abandoned (default 10). Env: TIDINGS_FEED_TIMEOUT")
    var feedTimeout: Double?
    @Option(name: .customLong("feed-proxy"), help: "Proxy for upstream feed requests, e.g. http://proxy:3128 (default: none; http_proxy and the like are ignored). Env: TIDINGS_FEED_PROXY")
    var feedProxy: String?
    @Option(name: .customLong("preferences"), help: "JSON schema file replacing the built-in preferences. Env: TIDINGS_PREFERENCES")
    var preferencesFile: String?
    @Option(name: .customLong("text-case"), help: "upper|none: how things are normalised (default upper). Env: TIDINGS_TEXT_CASE")
    var textCase: String?
    @Option(name: .customLong("api-token"), help: "Bearer token required for writes (repeatable). Env: TIDINGS_API_TOKEN")
    var apiTokens: [String] = []
    @Option(name: .customLong("read-token"), help: "Bearer token required for reads. Env: TIDINGS_READ_TOKEN")
    var readToken: String?
    @Option(name: .customLong("cors-origin"), help: "Allowed CORS origin, or * (repeatable). Env: TIDINGS_CORS_ORIGIN")
    var corsOrigins: [String] = []
    @Option(help: "Seconds between event-stream heartbeats (default 15). Env: TIDINGS_HEARTBEAT")
    var heartbeat: Double?
    @Option(name: .customLong("replay-buffer"), help: "Events kept for Last-Event-ID resume (default 10000). Env: TIDINGS_REPLAY_BUFFER")
    var replayBuffer: Int?
    @Option(name: .customLong("replay-bytes"), help: "Bytes of event history kept for resume (default 67108864). Env: TIDINGS_REPLAY_BYTES")
    var replayBytes: Int?
    @Option(name: .customLong("database-url"), help: "postgres://user:password@host:port/database: keep everything in PostgreSQL instead of SQLite. Env: TIDINGS_DATABASE_URL")
    var databaseURL: String?
    @Option(name: .customLong("database-commit-lanes"), help: "PostgreSQL group-commit transactions in flight at once, each on its own connection (default 1). Env: TIDINGS_DATABASE_COMMIT_LANES")
    var databaseCommitLanes: Int?
    @Option(name: .customLong("header-timeout"), help: "Seconds from a request head's first byte until it must be complete (default 10). Env: TIDINGS_HEADER_TIMEOUT")
    var headerTimeout: Double?
    @Option(name: .customLong("body-timeout"), help: "Seconds from the end of a request head until its whole body must have arrived (default 30). Env: TIDINGS_BODY_TIMEOUT")
    var bodyTimeout: Double?
    @Option(name: .customLong("max-connections-per-client"), help: "Open connections one client address may hold (default 512). Env: TIDINGS_MAX_CONNECTIONS_PER_CLIENT")
    var maxConnectionsPerClient: Int?
    @Option(name: .customLong("stream-workers"), help: "Threads that write event streams; 0 = one per core but one, at least one (default 0). Env: TIDINGS_STREAM_WORKERS")
    var streamWorkers: Int?
    @Option(name: .customLong("tokens"), help: "JSON file of named credentials [{\"name\", \"role\": \"read\"|\"write\", \"token\"|\"sha256\"}], reloaded on SIGHUP. Env: TIDINGS_TOKENS")
    var tokensFile: String?
    @Option(name: .customLong("history-days"), help: "Days of change history kept (default 30; fractions allowed). Env: TIDINGS_HISTORY_DAYS")
    var historyDays: Double?
    @Option(name: .customLong("history-bytes"), help: "Bytes of change history kept (default 268435456). Env: TIDINGS_HISTORY_BYTES")
    var historyBytes: Int?
    @Option(name: .customLong("trusted-proxy"), help: "Address or CIDR range of a proxy whose X-Forwarded-For / Forwarded names the client (repeatable). Env: TIDINGS_TRUSTED_PROXY (comma-separated)")
    var trustedProxies: [String] = []
    @Option(name: .customLong("max-environments"), help: "Environments that may exist at once, default included (default 64). Env: TIDINGS_MAX_ENVIRONMENTS")
    var maxEnvironments: Int?
    @Option(name: .customLong("max-streams"), help: "Event streams open at once (default: the descriptor limit less 10%, at least 256). Env: TIDINGS_MAX_STREAMS")
    var maxStreams: Int?
    @Option(name: .customLong("stream-padding"), help: "Bytes of comment sent first on every event stream, for proxies that hold the first bytes (0-8192, default 0). Env: TIDINGS_STREAM_PADDING")
    var streamPadding: Int?
    @Option(name: .customLong("webhooks"), help: "JSON file of webhooks [{\"name\", \"url\", \"secret\": \"whsec_...\", \"topics\"?, \"keys\"?, \"environments\"?}], reloaded on SIGHUP. Env: TIDINGS_WEBHOOKS")
    var webhooksFile: String?
    @Flag(name: .customLong("webhook-allow-private"), help: "Deliver webhooks to loopback, private and link-local addresses too. Env: TIDINGS_WEBHOOK_ALLOW_PRIVATE=true")
    var webhookAllowPrivate = false
    @Option(name: .customLong("log-level"), help: "trace|debug|info|notice|warning|error|critical (default info). Env: TIDINGS_LOG_LEVEL")
    var logLevel: String?

    /// Flags over environment over defaults, validated.
    func resolve(environment: [String: String]) throws -> TidingsConfiguration {
        func env(_ name: String) -> String? {
            environment["TIDINGS_" + name].flatMap { $0.isEmpty ? nil : $0 }
        }
        func number<T: LosslessStringConvertible>(_ flag: T?, _ name: String, _ fallback: T) throws -> T {
            if let flag { return flag }
            guard let text = env(name) else { return fallback }
            guard let value = T(text.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("TIDINGS_\(name)='\(text)' is not a valid number.")
            }
            return value
        }
        func list(_ flag: [String], _ name: String) -> [String] {
            if !flag.isEmpty { return flag }
            return env(name).map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty } } ?? []
        }

        var configuration = TidingsConfiguration()
        configuration.host = host ?? env("HOST") ?? configuration.host
        configuration.port = try number(port, "PORT", configuration.port)
        configuration.dataDir = dataDir ?? env("DATA_DIR") ?? configuration.dataDir
        configuration.feedURL = feedURL ?? env("FEED_URL")
        configuration.feedRefresh = try number(feedRefresh, "FEED_REFRESH", configuration.feedRefresh)
        configuration.feedTimeout = try number(feedTimeout, "FEED_TIMEOUT", configuration.feedTimeout)
        configuration.feedProxy = feedProxy ?? env("FEED_PROXY")
        configuration.preferencesFile = preferencesFile ?? env("PREFERENCES")
        let caseText = textCase ?? env("TEXT_CASE") ?? configuration.textCase.rawValue
        guard let parsedCase = TextCase(rawValue: caseText.lowercased()) else {
            throw ValidationError("--text-case must be upper or none, not '\(caseText)'.")
        }
        configuration.textCase = parsedCase
        configuration.apiTokens = list(apiTokens, "API_TOKEN")
        configuration.readToken = readToken ?? env("READ_TOKEN")
        configuration.corsOrigins = list(corsOrigins, "CORS_ORIGIN")
        configuration.heartbeat = try number(heartbeat, "HEARTBEAT", configuration.heartbeat)
        configuration.replayBuffer = try number(replayBuffer, "REPLAY_BUFFER", configuration.replayBuffer)
        configuration.replayBytes = try number(replayBytes, "REPLAY_BYTES", configuration.replayBytes)
        configuration.databaseURL = databaseURL ?? env("DATABASE_URL")
        configuration.databaseCommitLanes = try number(databaseCommitLanes, "DATABASE_COMMIT_LANES", configuration.databaseCommitLanes)
        configuration.headerTimeout = try number(headerTimeout, "HEADER_TIMEOUT", configuration.headerTimeout)
        configuration.bodyTimeout = try number(bodyTimeout, "BODY_TIMEOUT", configuration.bodyTimeout)
        configuration.maxConnectionsPerClient = try number(maxConnectionsPerClient, "MAX_CONNECTIONS_PER_CLIENT", configuration.maxConnectionsPerClient)
        configuration.streamWorkers = try number(streamWorkers, "STREAM_WORKERS", configuration.streamWorkers)
        configuration.tokensFile = tokensFile ?? env("TOKENS")
        configuration.historyDays = try number(historyDays, "HISTORY_DAYS", configuration.historyDays)
        configuration.historyBytes = try number(historyBytes, "HISTORY_BYTES", configuration.historyBytes)
        configuration.logLevel = (logLevel ?? env("LOG_LEVEL") ?? configuration.logLevel).lowercased()
        configuration.trustedProxies = list(trustedProxies, "TRUSTED_PROXY")
        if let maxStreams {
            configuration.maxStreams = maxStreams
        } else if env("MAX_STREAMS") != nil {
            configuration.maxStreams = try number(nil as Int?, "MAX_STREAMS", 0)
        }
        configuration.streamPadding = try number(streamPadding, "STREAM_PADDING", configuration.streamPadding)
        configuration.maxEnvironments = try number(maxEnvironments, "MAX_ENVIRONMENTS", configuration.maxEnvironments)
        guard (1...4_096).contains(configuration.maxEnvironments) else {
            throw ValidationError("--max-environments must be between 1 and 4096.")
        }
        configuration.webhooksFile = webhooksFile ?? env("WEBHOOKS")
        if webhookAllowPrivate {
            configuration.webhookAllowPrivate = true
        } else if let text = env("WEBHOOK_ALLOW_PRIVATE") {
            switch text.lowercased() {
            case "1", "true", "yes": configuration.webhookAllowPrivate = true
            case "0", "false", "no": configuration.webhookAllowPrivate = false
            default: throw ValidationError("TIDINGS_WEBHOOK_ALLOW_PRIVATE='\(text)' must be true or false.")
            }
        }

        do {
            _ = try TrustedProxies(configuration.trustedProxies)
        } catch {
            throw ValidationError("--trusted-proxy: \(error)")
        }
        if let streams = configuration.maxStreams, streams < 1 {
            throw ValidationError("--max-streams must be 1 or more.")
        }
        guard (0...ServerSentEvent.maxPadding).contains(configuration.streamPadding) else {
            throw ValidationError("--stream-padding must be between 0 and \(ServerSentEvent.maxPadding) bytes.")
        }

        guard (0...65_535).contains(configuration.port) else {
            throw ValidationError("--port must be between 0 and 65535, not \(configuration.port).")
        }
        guard configuration.feedRefresh >= 0, configuration.feedRefresh.isFinite else {
            throw ValidationError("--feed-refresh must be 0 or more seconds.")
        }
        guard configuration.feedTimeout > 0, configuration.feedTimeout.isFinite else {
            throw ValidationError("--feed-timeout must be more than 0 seconds.")
        }
        guard configuration.heartbeat > 0, configuration.heartbeat.isFinite else {
            throw ValidationError("--heartbeat must be more than 0 seconds.")
        }
        guard configuration.replayBuffer >= 0 else {
            throw ValidationError("--replay-buffer must be 0 or more.")
        }
        guard configuration.replayBytes >= 0 else {
            throw ValidationError("--replay-bytes must be 0 or more.")
        }
        guard configuration.historyDays > 0, configuration.historyDays.isFinite, configuration.historyDays <= 36_500 else {
            throw ValidationError("--history-days must be more than 0 (and at most 36500).")
        }
        guard configuration.historyBytes >= 0 else {
            throw ValidationError("--history-bytes must be 0 or more.")
        }
        guard configuration.headerTimeout > 0, configuration.headerTimeout.isFinite else {
            throw ValidationError("--header-timeout must be more than 0 seconds.")
        }
        guard configuration.bodyTimeout > 0, configuration.bodyTimeout.isFinite else {
            throw ValidationError("--body-timeout must be more than 0 seconds.")
        }
        guard configuration.maxConnectionsPerClient >= 1 else {
            throw ValidationError("--max-connections-per-client must be 1 or more.")
        }
        guard (0...256).contains(configuration.streamWorkers) else {
            throw ValidationError("--stream-workers must be between 0 (one per core but one) and 256.")
        }
        guard (1...8).contains(configuration.databaseCommitLanes) else {
            throw ValidationError("--database-commit-lanes must be between 1 and 8.")
        }
        if let url = configuration.databaseURL {
            guard let components = URLComponents(string: url),
                  ["postgres", "postgresql"].contains(components.scheme?.lowercased() ?? ""),
                  components.host?.isEmpty == false else {
                throw ValidationError("--database-url must be postgres://user:password@host:port/database.")
            }
        }
        guard Logger.Level(rawValue: configuration.logLevel) != nil else {
            throw ValidationError("--log-level must be one of trace, debug, info, notice, warning, error, critical.")
        }
        if let feed = configuration.feedURL {
            guard let url = URL(string: feed), let scheme = url.scheme?.lowercased(),
                  scheme == "http" || scheme == "https", url.host != nil else {
                throw ValidationError("--feed-url must be an http(s) URL, not '\(feed)'.")
            }
        }
        if let proxy = configuration.feedProxy {
            guard let url = URL(string: proxy), let scheme = url.scheme?.lowercased(),
                  ["http", "https", "socks5", "socks5h"].contains(scheme), url.host?.isEmpty == false,
                  !proxy.contains(where: { $0.isWhitespace || $0.isNewline }) else {
                throw ValidationError("--feed-proxy must be an http, https, socks5 or socks5h URL with a host, not '\(proxy)'.")
            }
        }
        if configuration.apiTokens.contains(where: \.isEmpty) || configuration.readToken == "" {
            throw ValidationError("Tokens must not be empty.")
        }
        return configuration
    }
}
