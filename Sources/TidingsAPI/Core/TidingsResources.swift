import EventHTTP
import Foundation
import Logging
import Observing
import TidingsModel
import TidingsStore

/// Why the resources could not start (bad `--preferences` file, unusable data directory).
public struct StartupError: Error, CustomStringConvertible {
    public let description: String
}

/// The resources of openapi.yaml, made by ``TidingsApplication`` as it is assembled: the durable
/// store, the observable state loaded from it, the write pipeline, the event streams and every
/// route (registered in the application's route groups).
///
/// Main-actor bound, like everything that touches observable state.
@MainActor
public final class TidingsResources {
    let store: any ChangeStore
    let state: TidingsState
    let feed: ChangeFeed
    let writes: WritePipeline
    let streams: StreamHub
    /// `--webhooks`: the hooks and their delivery workers (Webhooks/).
    let webhooks: Webhooks

    /// Opens the store (`--database-url`, or SQLite under `--data-dir`), loads it and its
    /// replay history, and registers every route. Blocks the calling thread for the loads
    /// (start-up, before the loop runs).
    init(application app: TidingsApplication) throws {
        let configuration = app.configuration
        let limits = Self.historyLimits(configuration)
        let where_ = configuration.databaseURL.map(Self.redacted) ?? configuration.dataDir
        store = try Self.openStore(configuration, limits: limits, logger: app.logger)
        let (snapshot, history): (StoreSnapshot, [Change])
        do {
            (snapshot, history) = try blockingAwait { [store] in
                let snapshot = try await store.loadSnapshot()
                let history = try await store.recentChanges(maxCount: configuration.replayBuffer, maxBytes: configuration.replayBytes)
                return (snapshot, history)
            }
        } catch {
            throw StartupError(description: "cannot read the store in \(where_): \(error)")
        }
        let preferences = try Self.makePreferences(configuration, store: InMemoryKeyValueStore(Self.storedValues(snapshot)))
        let textCase = configuration.textCase
        let journal = EventJournal(capacity: configuration.replayBuffer, maxBytes: configuration.replayBytes, floor: snapshot.revision)
        // The history up to the snapshot; later changes arrive through the feed like any other.
        let retained = history.filter { $0.revision <= snapshot.revision }
        journal.seed(retained.compactMap { TidingsState.entry(for: TidingsState.committed($0, preferences: preferences)) },
                     floor: retained.first.map { $0.revision - 1 } ?? snapshot.revision)
        state = TidingsState(preferences: preferences, snapshot: snapshot, textCase: textCase,
                             journal: journal, logger: app.logger)
        feed = ChangeFeed(store: store, state: state, identity: snapshot.identity, logger: app.logger)
        writes = WritePipeline(state: state, store: store, feed: feed)
        writes.credentials = app.credentials
        feed.start()
        streams = StreamHub(state: state)
        streams.store = store
        streams.catchUp = StreamCatchUp(store: store, feed: feed)

        let routes = app.routes
        // History (History/): pages of change records, as-of reads, rollback.
        let asOf = AsOfReads(state: state, store: store)
        HistoryRoutes(state: state, store: store).register(on: routes.resources)
        RollbackRoutes(state: state, store: store, writes: writes).register(on: routes.resources)
        PreferenceRoutes(state: state, writes: writes, asOf: asOf).register(on: routes.resources)
        try PreferenceSchemaRoute.register(preferences: preferences, on: routes.resources)
        ThingRoutes(state: state, writes: writes, asOf: asOf).register(on: routes.resources)
        StreamRoutes(state: state, hub: streams).register(on: routes.streams)
        OFREPRoutes.register(state: state, hub: streams, on: routes)
        try DashboardRoute.register(on: routes.open)
        ContractRoute.register(preferences: preferences, on: routes.resources)
        // Metrics: open streams, events published, store write latency (Metrics/).
        ResourceMetrics.attach(state: state, writes: writes, streams: streams)

        // Posts: the feed (its URL resolved at first use, after start), the built-in sample
        // upstream, and its shutdown (cancel loads; before the writes drain, so a document
        // already submitted still lands). Metrics: `posts.reportFetches(to:)`.
        let posts = PostsFeed(configuration: configuration, state: state, writes: writes,
                              boundPort: { [unowned app] in app.server.port },
                              isDraining: { [unowned app] in app.server.isDraining }, logger: app.logger)
        // One upstream fetch per background refresh for every instance sharing the store.
        let holder = UUID().uuidString
        let leaseSeconds = configuration.feedRefresh > 0 ? max(1, configuration.feedRefresh * 0.9) : configuration.feedTimeout + 5
        posts.fetchLease = { [store, logger = app.logger] in
            do {
                return try await store.acquireLease("posts-fetch", holder: holder, duration: .seconds(leaseSeconds))
            } catch {
                logger.warning("cannot take the posts fetch lease; fetching anyway", metadata: ["error": "\(error)"])
                return true
            }
        }
        // One upstream fetch at a time in the cluster: the others join it (ClusterFeedClient).
        let loadSeconds = configuration.feedTimeout + 5
        posts.loadLease = PostsLoadLease(
            take: { [store, logger = app.logger] in
                do {
                    return try await store.acquireLease("posts-load", holder: holder, duration: .seconds(loadSeconds))
                } catch {
                    logger.warning("cannot take the posts load lease; fetching anyway", metadata: ["error": "\(error)"])
                    return true
                }
            },
            release: { [store] in _ = try? await store.acquireLease("posts-load", holder: holder, duration: .seconds(1)) })
        PostsRoutes(feed: posts).register(on: routes.resources)
        posts.reportFetches { TidingsMetrics.shared.recordUpstreamFetch(outcome: $0) }
        try SampleFeedRoutes(feed: SampleFeed.load()).register(on: routes.resources)
        app.addShutdownTask { posts.shutdown() }

        // Webhooks: a durable outbox cursor per hook over the change table, one lease per hook.
        webhooks = try Webhooks(configuration: configuration, store: store, state: state, feed: feed, logger: app.logger)
        WebhookRoutes(webhooks: webhooks).register(on: routes.resources)
        webhooks.start()
        app.addShutdownTask { [webhooks] in await webhooks.stop() }

        app.addShutdownTask { [writes, store, feed] in
            await writes.drain()
            feed.stop()
            await store.close()
        }
    }

    /// What the change table keeps (API.md "History"): records within `--history-days` and
    /// `--history-bytes`, and whatever those say, the newest `--replay-buffer` records within
    /// `--replay-bytes` (resume reaches them). An instance that falls further behind than the
    /// table reaches rebuilds from a snapshot (ChangeFeed).
    static func historyLimits(_ configuration: TidingsConfiguration) -> ChangeStoreLimits {
        ChangeStoreLimits(historyBytes: configuration.historyBytes,
                          historyAge: .milliseconds(Int64(configuration.historyDays * 86_400_000)),
                          keepCount: configuration.replayBuffer,
                          keepBytes: configuration.replayBytes)
    }

    /// SQLite under `--data-dir`, or PostgreSQL for `--database-url`.
    private static func openStore(_ configuration: TidingsConfiguration, limits: ChangeStoreLimits,
                                  logger: Logger) throws -> any ChangeStore {
        if let url = configuration.databaseURL {
            return try openPostgres(url: url, limits: limits, logger: logger)
        }
        do {
            return try SQLiteStore(directory: URL(fileURLWithPath: configuration.dataDir, isDirectory: true), limits: limits)
        } catch {
            throw StartupError(description: "cannot open the store in \(configuration.dataDir): \(error)")
        }
    }

    /// A database URL without its password, for messages.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "(the database URL)" }
        if components.password != nil { components.password = "***" }
        return components.string ?? "(the database URL)"
    }

    /// The built-in set, or the `--preferences` schema, with stored values that still fit.
    private static func storedValues(_ snapshot: StoreSnapshot) -> [String: PreferenceValue] {
        var stored: [String: PreferenceValue] = [:]
        for (key, record) in snapshot.preferences {
            guard let json = record.json,
                  let value = try? JSONCoding.decoder.decode(PreferenceValue.self, from: Data(json.utf8)) else { continue }
            stored[key] = value
        }
        return stored
    }

    private static func makePreferences(_ configuration: TidingsConfiguration, store mirror: InMemoryKeyValueStore) throws -> TidingsPreferences {
        guard let path = configuration.preferencesFile else {
            return TidingsPreferences.builtIn(store: mirror)
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw StartupError(description: "cannot read --preferences file \(path): \(error.localizedDescription)")
        }
        let preferences: TidingsPreferences
        do {
            preferences = try TidingsPreferences(schemaJSON: data, store: mirror)
        } catch {
            throw StartupError(description: "invalid --preferences file \(path): \(error)")
        }
        // Keys are path segments and query words: the contract's pattern keeps them plain.
        if let bad = preferences.declarations.map(\.key).first(where: { !Self.isPlainKey($0) }) {
            throw StartupError(description: "invalid --preferences file \(path): preference \"\(bad)\": "
                + "a key is a letter or _ followed by up to 63 letters, digits, _, . or -")
        }
        // `/preferences/events` is the event stream: a key of that name could be read and
        // written only through PATCH, so it is refused like any other bad declaration.
        if preferences.declaration(forKey: "events") != nil {
            throw StartupError(description: "invalid --preferences file \(path): preference \"events\": "
                + "the name is reserved (GET /preferences/events is the event stream)")
        }
        // `/preferences/rollback` is the rollback (History/): the same holds.
        if preferences.declaration(forKey: "rollback") != nil {
            throw StartupError(description: "invalid --preferences file \(path): preference \"rollback\": "
                + "the name is reserved (POST /preferences/rollback rolls preferences back)")
        }
        return preferences
    }

    /// `^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`, the key pattern of openapi.yaml.
    static func isPlainKey(_ key: String) -> Bool {
        let bytes = Array(key.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        func isLetter(_ b: UInt8) -> Bool { (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 95 }
        func isDigit(_ b: UInt8) -> Bool { b >= 48 && b <= 57 }
        guard isLetter(bytes[0]) else { return false }
        return bytes.dropFirst().allSatisfy { isLetter($0) || isDigit($0) || $0 == 46 || $0 == 45 }
    }
}
