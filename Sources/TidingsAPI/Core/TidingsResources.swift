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
        let preferences = try Self.makePreferences(configuration, snapshot: snapshot)
        let textCase: TextCase = configuration.textCase == .upper ? .upper : .none
        state = TidingsState(preferences: preferences, snapshot: snapshot, textCase: textCase,
                             replayCapacity: configuration.replayBuffer)
        writes = WritePipeline(state: state, log: store)
        streams = StreamHub(state: state)

        PreferenceRoutes(state: state, writes: writes).register(on: app.router)
        ThingRoutes(state: state, writes: writes).register(on: app.router)
        StreamRoutes(state: state, hub: streams).register(on: app.router)
        DashboardRoute.register(on: app.router)
        ContractRoute.register(on: app.router)
        // Metrics: open streams, events published, store write latency (Metrics/).
        ResourceMetrics.attach(state: state, writes: writes, streams: streams)

        let state = state
        app.revisionProvider = { MainActor.assumeIsolated { state.revision } }
        app.addShutdownTask { [writes, store] in
            await writes.drain()
            await store.close()
        }
    }

    /// The built-in set, or the `--preferences` schema, with stored values that still fit.
    private static func makePreferences(_ configuration: TidingsConfiguration, snapshot: StoreSnapshot) throws -> Preferences {
        var stored: [String: PreferenceValue] = [:]
        for (key, record) in snapshot.preferences {
            guard let json = record.json,
                  let value = try? JSONDecoder().decode(PreferenceValue.self, from: Data(json.utf8)) else { continue }
            stored[key] = value
        }
        let mirror = InMemoryKeyValueStore(stored)
        guard let path = configuration.preferencesFile else {
            return BuiltInPreferences(store: mirror).preferences
        }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw StartupError(description: "cannot read --preferences file \(path): \(error.localizedDescription)")
        }
        do {
            return try Preferences(schemaJSON: data, store: mirror)
        } catch {
            throw StartupError(description: "invalid --preferences file \(path): \(error)")
        }
    }
}
