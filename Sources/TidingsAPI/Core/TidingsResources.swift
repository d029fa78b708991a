import Synchronization
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
    /// `default`'s state, writes and streams (the unprefixed paths'); every environment's are
    /// in ``environments``.
    let state: TidingsState
    let feed: ChangeFeed
    let writes: WritePipeline
    let streams: StreamHub
    /// Every environment (API.md "Environments"), and where the `/environments/{env}` prefix
    /// is resolved: install a resource's routes with ``environmentRoutes`` so that each
    /// environment gets its own handlers (`install(on: routes) { environment, groups in ... }`).
    let environments: Environments
    let environmentRoutes: EnvironmentRoutes
    /// `--webhooks`: the hooks and their delivery workers (Webhooks/).
    let webhooks: Webhooks
    /// The posts feed (its cycle is made at first use).
    private(set) var posts: PostsFeed!

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
        let main = EnvironmentName.default
        let preferences = try Self.makePreferences(
            configuration, store: InMemoryKeyValueStore(Self.storedValues(snapshot.environments[main]?.preferences ?? snapshot.preferences)))
        let textCase = configuration.textCase
        // The history up to the snapshot; later changes arrive through the feed like any other.
        let retained = history.filter { $0.revision <= snapshot.revision }
        let journalFloor = retained.first.map { $0.revision - 1 } ?? snapshot.revision
        /// An environment's journal: its own events and the posts' (every environment's).
        func journal(_ name: String, seeded: Bool) -> EventJournal {
            let journal = EventJournal(capacity: configuration.replayBuffer, maxBytes: configuration.replayBytes, floor: snapshot.revision)
            if seeded {
                let own = retained.filter { change in
                    if case .posts = change.kind { return true }
                    return change.environment == name
                }
                journal.seed(own.compactMap { TidingsState.entry(for: TidingsState.committed($0, preferences: preferences)) },
                             floor: journalFloor)
            }
            return journal
        }
        state = TidingsState(preferences: preferences, snapshot: snapshot, textCase: textCase,
                             journal: journal(main, seeded: true), logger: app.logger)
        feed = ChangeFeed(store: store, state: state, identity: snapshot.identity, logger: app.logger)
        writes = WritePipeline(state: state, store: store, feed: feed)
        writes.credentials = app.credentials
        let topicNumbers = TopicNumbers()
        streams = StreamHub(state: state, topicNumbers: topicNumbers)
        streams.store = store
        streams.catchUp = StreamCatchUp(store: store, feed: feed)
        let mainContext = EnvironmentContext(
            name: main, createdAt: snapshot.environments[main]?.createdAt ?? 0, copiedFrom: nil,
            revision: snapshot.environments[main]?.revision ?? 0, state: state, writes: writes,
            asOf: AsOfReads(state: state, store: store), streams: streams)
        // Every other environment: the same declarations, its own values, journal, writes, streams.
        // Whether an environment is being made at start (its journal seeded) or later (created
        // by a request): read by the factory below, which may run on any thread.
        let starting = Mutex(true)
        let (mainState, clock, logger) = (state, state.clock, app.logger)
        environments = Environments(main: mainContext, snapshot: snapshot, limit: configuration.maxEnvironments,
                                    logger: app.logger) { [store, feed, credentials = app.credentials] stored, snapshot in
            let values = InMemoryKeyValueStore(Self.storedValues(stored.preferences))
            // The built-in or declared set was checked at start; the same declarations again cannot fail.
            let containers = (try? TidingsPreferences(declarations: preferences.declarations, store: values)) ?? preferences
            let state = TidingsState(preferences: containers, snapshot: snapshot, textCase: textCase,
                                     journal: journal(stored.name, seeded: starting.withLock { $0 }), logger: logger,
                                     environment: stored.name, clock: clock)
            let writes = WritePipeline(state: state, store: store, feed: feed)
            writes.credentials = credentials
            let streams = StreamHub(state: state, postsState: mainState, topicNumbers: topicNumbers)
            streams.store = store
            streams.catchUp = StreamCatchUp(store: store, feed: feed)
            return EnvironmentContext(name: stored.name, createdAt: stored.createdAt, copiedFrom: stored.copiedFrom,
                                      revision: stored.revision, state: state, writes: writes,
                                      asOf: AsOfReads(state: state, store: store), streams: streams)
        }
        starting.withLock { $0 = false }
        feed.apply(to: environments)
        feed.start()
        environments.catchUp = { [feed] in await feed.caughtUp() }
        environmentRoutes = EnvironmentRoutes(environments: environments)

        let routes = app.routes
        // Stream tickets are signed with the store's one secret and single-use across the
        // instances sharing this store (Access/).
        if let secrets = store as? any ServerSecretStore {
            do {
                routes.tickets.secret = try blockingAwait { try await secrets.streamTicketSecret() }
            } catch {
                throw StartupError(description: "cannot read the stream ticket secret in \(where_): \(error)")
            }
            // A database put in this one's place has a secret of its own (or gets one now), which
            // the instances started on it use: take it too, or their tickets and ours would differ.
            feed.onReload = { [tickets = routes.tickets, logger = app.logger] in
                do {
                    tickets.secret = try await secrets.streamTicketSecret()
                } catch {
                    logger.warning("cannot read the stream ticket secret after reloading; keeping the one read before",
                                   metadata: ["error": "\(error)"])
                }
            }
        }
        routes.streams.claims.takeLease = { [store] in try await store.acquireLease($0, holder: $1, duration: $2) }
        let schemaRoutes = try PreferenceSchemaRoute.routes(preferences: preferences)
        environmentRoutes.install(on: routes) { [store] environment, groups in
            let (state, writes, asOf) = (environment.state, environment.writes, environment.asOf)
            // History (History/): pages of change records, as-of reads, rollback.
            HistoryRoutes(state: state, store: store).register(on: groups.resourceRoutes)
            RollbackRoutes(state: state, store: store, writes: writes).register(on: groups.resourceRoutes)
            PreferenceRoutes(state: state, writes: writes, asOf: asOf).register(on: groups.resourceRoutes)
            schemaRoutes(groups.resourceRoutes)
            ThingRoutes(state: state, writes: writes, asOf: asOf).register(on: groups.resourceRoutes)
            StreamRoutes(state: state, hub: environment.streams).register(on: groups.streamRoutes)
            OFREPRoutes.register(state: state, hub: environment.streams, on: groups)
            // Changes as code (Automation/): export, apply — per environment.
            ExportRoutes(state: state, store: store).register(on: groups.resourceRoutes)
            ApplyRoutes(state: state, writes: writes).register(on: groups.resourceRoutes)
        }
        // Schedules (Schedules/): durable future writes per environment, applied in theirs by
        // whichever instance claims them.
        if let schedules = store as? any ChangeStore & ScheduleStore {
            let runner = ScheduleRunner(environments: environments, store: schedules, logger: app.logger)
            environmentRoutes.install(on: routes) { [credentials = app.credentials] environment, groups in
                var scheduleRoutes = ScheduleRoutes(state: environment.state, store: schedules, writes: environment.writes, runner: runner)
                scheduleRoutes.credentials = credentials
                scheduleRoutes.register(on: groups.resourceRoutes)
            }
            runner.start()
            // Before the writes drain: a schedule being applied finishes, no new one starts.
            app.addShutdownTask { runner.stop() }
        }
        // `POST /environments/{env}/stream-tickets` (API.md "Environments"): the access check
        // refuses a credential that does not reach the environment, a ticket is good only where
        // its credential is, and an unknown environment is a 404 like every path under it.
        routes.readingPosts.post(EnvironmentRoutes.prefix + "/stream-tickets") { [environments, issue = routes.issueTicket] request, responder in
            let name = request.environmentName
            environments.knowing([name]) {
                guard environments.context(name) != nil else { return responder.send(.problem(Problems.unknownEnvironment(name))) }
                do { try issue(request, responder) } catch { responder.send(.error(error)) }
            }
        }
        EnvironmentResourceRoutes(environments: environments, store: store) { [credentials = app.credentials] request, name in
            credentials.policy.mayReach(name, request: request)
        }.register(on: routes.resources)
        try DashboardRoute.register(on: routes.open)
        ContractRoute.register(preferences: preferences, on: routes.resources)
        // Metrics: open streams, events published, store write latency (Metrics/).
        ResourceMetrics.attach(state: state, writes: writes, streams: streams)
        EnvironmentMetrics.attach(environments)

        // Posts: the feed (its URL resolved at first use, after start), the built-in sample
        // upstream, and its shutdown (cancel loads; before the writes drain, so a document
        // already submitted still lands). Metrics: `posts.reportFetches(to:)`.
        let posts = PostsFeed(configuration: configuration, state: state, writes: writes,
                              client: CurlHTTPClient(proxy: configuration.feedProxy),
                              boundPort: { [unowned app] in app.server.port },
                              isDraining: { [unowned app] in app.server.isDraining }, logger: app.logger)
        // One upstream fetch per background refresh for every instance sharing the store and
        // the feed URL (the leases are named by the URL: PostsLeaseName).
        let holder = UUID().uuidString
        let leaseSeconds = configuration.feedRefresh > 0 ? max(1, configuration.feedRefresh * 0.9) : configuration.feedTimeout + 5
        posts.fetchLease = { [store, logger = app.logger] source in
            do {
                return try await store.acquireLease(PostsLeaseName.fetch(source: source), holder: holder, duration: .seconds(leaseSeconds))
            } catch {
                logger.warning("cannot take the posts fetch lease; fetching anyway", metadata: ["error": "\(error)"])
                return true
            }
        }
        // A refused posts document is decided again once this instance caught up (PostsCycle).
        posts.catchUp = { [feed] revision in
            feed.ring()
            await feed.waitUntilApplied(revision)
        }
        // One upstream fetch of a feed at a time in the cluster: the others join it (PostsCycle+Route).
        let loadLifetime = PostsLoadLease.lifetime(upstreamTimeout: .seconds(configuration.feedTimeout))
        posts.loadLease = { [store, logger = app.logger] source in
            let name = PostsLeaseName.load(source: source)
            return PostsLoadLease(
                take: {
                    do {
                        return try await store.takeLease(name, holder: holder, duration: loadLifetime)
                    } catch {
                        logger.warning("cannot take the posts load lease; fetching anyway", metadata: ["error": "\(error)"])
                        return .taken
                    }
                },
                // Given back once the outcome is stored (the cycle calls it then): the row goes,
                // so a joined load's next take finds it free, not taken over.
                release: { try? await store.releaseLease(name, holder: holder) },
                lifetime: loadLifetime)
        }
        posts.caughtUp = { [feed] in await feed.caughtUp() }
        environmentRoutes.install(on: routes) { _, groups in PostsRoutes(feed: posts).register(on: groups.resourceRoutes) }
        posts.reportFetches { TidingsMetrics.shared.recordUpstreamFetch(outcome: $0) }
        try SampleFeedRoutes(feed: SampleFeed.load()).register(on: routes.resources)
        app.addShutdownTask { await posts.shutdown() }

        // Webhooks: a durable outbox cursor per hook over the change table, one lease per hook.
        webhooks = try Webhooks(configuration: configuration, store: store, state: state, feed: feed, logger: app.logger)
        WebhookRoutes(webhooks: webhooks).register(on: routes.resources)
        webhooks.start()
        app.addShutdownTask { [webhooks] in await webhooks.stop() }
        self.posts = posts

        app.addShutdownTask { [environments, store, feed] in
            await environments.drain()
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
            var options = PostgresStoreOptions()
            options.commitLanes = configuration.databaseCommitLanes
            return try openPostgres(url: url, limits: limits, options: options, logger: logger)
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
    private static func storedValues(_ preferences: [String: StoredPreference]) -> [String: PreferenceValue] {
        var stored: [String: PreferenceValue] = [:]
        for (key, record) in preferences {
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
