public import OpenCombine

/// The store behind a ``Preferences`` container: pluggable (in memory here; SQLite in the
/// server). Confined to the main actor, like the container that uses it.
///
/// A store holds only values that were set; a missing key means "use the default".
@MainActor
public protocol KeyValueStore: AnyObject {
    /// The stored value for `key`, or nil when none was set.
    func value(forKey key: String) -> PreferenceValue?
    /// Writes several values at once (nil removes a key). Either all are written or none.
    func write(_ changes: [String: PreferenceValue?]) throws
    /// Changes made outside this process (another instance sharing the store), delivered on
    /// the main actor, nil meaning the key was removed. The container feeds them into the same
    /// per-key subjects as its own writes.
    var externalChanges: AnyPublisher<[String: PreferenceValue?], Never> { get }
}

/// A ``KeyValueStore`` in memory, with ``simulateExternalChange(_:)`` standing in for
/// another process writing to a shared store.
@MainActor
public final class InMemoryKeyValueStore: KeyValueStore {
    private var values: [String: PreferenceValue]
    private let external = PassthroughSubject<[String: PreferenceValue?], Never>()
    /// How many times ``write(_:)`` was called (tests assert write-through with it).
    public private(set) var writeCount = 0

    public init(_ values: [String: PreferenceValue] = [:]) {
        self.values = values
    }

    public func value(forKey key: String) -> PreferenceValue? { values[key] }

    public func write(_ changes: [String: PreferenceValue?]) throws {
        writeCount += 1
        for (key, value) in changes { values[key] = value }
    }

    public var externalChanges: AnyPublisher<[String: PreferenceValue?], Never> { external.eraseToAnyPublisher() }

    /// Changes the stored values as another process would, then reports them.
    public func simulateExternalChange(_ changes: [String: PreferenceValue?]) {
        for (key, value) in changes { values[key] = value }
        external.send(changes)
    }
}
