import EventHTTP
import Foundation
import Logging
import Observing
import TidingsStore

/// Why the resources could not start (bad `--preferences` file, unusable data directory).
public struct StartupError: Error, CustomStringConvertible {
    public let description: String
}

/// The resources of API.md wired onto a ``TidingsApplication``: the durable store, the
/// observable state loaded from it, the write pipeline, the event streams and every route.
///
/// Main-actor bound, like everything that touches observable state.
@MainActor
public final class TidingsResources {
    let store: SQLiteStore
    let state: TidingsState
    let writes: WritePipeline
    let streams: StreamHub

    /// Opens the store under `configuration.dataDir`, loads it, and registers every route.
    public init(application app: TidingsApplication) throws {
        let configuration = app.configuration
        do {
            store = try SQLiteStore(directory: URL(fileURLWithPath: configuration.dataDir, isDirectory: true),
                                    changeRetention: UInt64(max(configuration.replayBuffer, 1_000)))
        } catch {
            throw StartupError(description: "cannot open the store in \(configuration.dataDir): \(error)")
        }
        let snapshot: StoreSnapshot
        do { snapshot = try store.loadSnapshot() } catch {
            throw StartupError(description: "cannot read the store in \(configuration.dataDir): \(error)")
        }
        let sharedStore = SharedStoreKeyValueStore(Self.storedValues(snapshot))
        let preferences = try Self.makePreferences(configuration, store: sharedStore)
        let textCase: TextCase = configuration.textCase == .upper ? .upper : .none
        state = TidingsState(preferences: preferences, snapshot: snapshot, textCase: textCase,
                             replayCapacity: configuration.replayBuffer)
        writes = WritePipeline(state: state, log: store)

        // Another instance sharing the data directory: its commits reach our subjects too.
        // The store calls back on its writer queue before answering our next commit; the hop
        // through the main queue keeps that order (FIFO with the commit's continuation).
        let applier = ExternalChangeApplier(state: state, sharedStore: sharedStore)
        store.watchExternalChanges { change in
            DispatchQueue.main.async { MainActor.assumeIsolated { applier.apply(change) } }
        }
        streams = StreamHub(state: state)

        PreferenceRoutes(state: state, writes: writes).register(on: app.router)
        try PreferenceSchemaRoute.register(preferences: preferences, on: app.router)
        ThingRoutes(state: state, writes: writes).register(on: app.router)
        StreamRoutes(state: state, hub: streams).register(on: app.router)
        OFREPRoutes.register(state: state, hub: streams, on: app.router)
        DashboardRoute.register(on: app.router)
        ContractRoute.register(preferences: preferences, on: app.router)
        // Metrics: open streams, events published, store write latency (Metrics/).
        ResourceMetrics.attach(state: state, writes: writes, streams: streams)

        // Posts: the feed (its URL resolved at first use, after start), the built-in sample
        // upstream, and its shutdown (cancel loads; before the writes drain, so an announcement
        // already submitted still lands). Metrics: `posts.reportFetches(to:)`.
        let posts = PostsFeed(configuration: configuration, state: state, writes: writes,
                              boundPort: { [unowned app] in app.server.port },
                              isDraining: { [unowned app] in app.server.isDraining }, logger: app.logger)
        PostsRoutes(feed: posts).register(on: app.router)
        posts.reportFetches { TidingsMetrics.shared.recordUpstreamFetch(outcome: $0) }
        SampleFeedRoutes().register(on: app.router)
        app.addShutdownTask { posts.shutdown() }

        let state = state
        app.revisionProvider = { MainActor.assumeIsolated { state.revision } }
        app.addShutdownTask { [writes, store] in
            await writes.drain()
            await store.close()
        }
    }

    /// The built-in set, or the `--preferences` schema, with stored values that still fit.
    private static func storedValues(_ snapshot: StoreSnapshot) -> [String: PreferenceValue] {
        var stored: [String: PreferenceValue] = [:]
        for (key, record) in snapshot.preferences {
            guard let json = record.json,
                  let value = try? JSONDecoder().decode(PreferenceValue.self, from: Data(json.utf8)) else { continue }
            stored[key] = value
        }
        return stored
    }

    private static func makePreferences(_ configuration: TidingsConfiguration, store mirror: SharedStoreKeyValueStore) throws -> Preferences {
        guard let path = configuration.preferencesFile else {
            return BuiltInPreferences(store: mirror).preferences
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw StartupError(description: "cannot read --preferences file \(path): \(error.localizedDescription)")
        }
        let preferences: Preferences
        do {
            preferences = try Preferences(schemaJSON: data, store: mirror)
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
