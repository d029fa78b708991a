import Observing
import OpenCombine

/// The preferences container's key-value store in the server: the values loaded from SQLite,
/// plus the changes *other server instances* commit to the same database file — the
/// `@CloudStorage` idea, for real. Those arrive on ``externalChanges`` and so reach the
/// container's per-key subjects exactly as local writes do; observers cannot tell them apart.
///
/// The server's own writes do not come through ``write(_:)``: they are committed durably by the
/// write pipeline and then applied to the container, so this store only mirrors them.
/// Confined to the main actor.
@MainActor
final class SharedStoreKeyValueStore: KeyValueStore {
    private var values: [String: PreferenceValue]
    private let external = PassthroughSubject<[String: PreferenceValue?], Never>()

    init(_ values: [String: PreferenceValue]) {
        self.values = values
    }

    func value(forKey key: String) -> PreferenceValue? { values[key] }

    func write(_ changes: [String: PreferenceValue?]) throws {
        for (key, value) in changes { values[key] = value }
    }

    var externalChanges: AnyPublisher<[String: PreferenceValue?], Never> { external.eraseToAnyPublisher() }

    /// Announces changes another instance committed (nil = reset to the default).
    func receiveExternal(_ changes: [String: PreferenceValue?]) {
        for (key, value) in changes { values[key] = value }
        external.send(changes)
    }
}
