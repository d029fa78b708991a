/// A key into ``EnvironmentValues``, with the value used when nobody set one.
///
/// ```swift
/// enum RetryBaseKey: EnvironmentKey { static let defaultValue: Duration = .seconds(1) }
/// extension EnvironmentValues {
///     var retryBase: Duration { get { self[RetryBaseKey.self] } set { self[RetryBaseKey.self] = newValue } }
/// }
/// ```
public protocol EnvironmentKey {
    associatedtype Value: Sendable
    static var defaultValue: Value { get }
}

/// Dependencies by typed key (HTTP client, text case, sleeper, …). A value type: each owner
/// holds its own copy, so overriding a key for one owner (or in a test) affects nobody else.
public struct EnvironmentValues: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    public init() {}

    public subscript<Key: EnvironmentKey>(key: Key.Type) -> Key.Value {
        get { (values[ObjectIdentifier(key)] as? Key.Value) ?? Key.defaultValue }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}

/// Something that runs before its owner is evaluated (``EnvironmentOwner/updateDynamicProperties()``).
/// `update(from:)` must be cheap and idempotent: it may run before every evaluation.
@MainActor
public protocol DynamicProperty {
    func update(from environment: EnvironmentValues)
}

/// An object that carries an environment and has ``Environment`` properties.
@MainActor
public protocol EnvironmentOwner: AnyObject {
    /// This owner's environment; set keys on it to override them for this owner only.
    var environment: EnvironmentValues { get set }
}

extension EnvironmentOwner {
    /// Brings every dynamic property (``Environment`` wrappers) up to date with
    /// ``environment``. Owners call this at the start of each evaluation (a load, an add), so
    /// values are read when the owner is evaluated, not when the wrapper was created.
    public func updateDynamicProperties() {
        let environment = self.environment
        var mirror: Mirror? = Mirror(reflecting: self)
        while let m = mirror {
            for child in m.children {
                (child.value as? any DynamicProperty)?.update(from: environment)
            }
            mirror = m.superclassMirror
        }
    }
}

/// Reads one environment value of its owner: `@Environment(\.httpClient) var httpClient`.
///
/// The value is the one resolved at the owner's last ``EnvironmentOwner/updateDynamicProperties()``
/// (or, before the first one, the owner's current environment).
@MainActor
@propertyWrapper
public struct Environment<Value: Sendable>: DynamicProperty {
    /// Shared by the copies Mirror hands out, so `update(from:)` reaches the owner's wrapper.
    private final class Snapshot {
        var value: Value?
    }

    public let keyPath: KeyPath<EnvironmentValues, Value>
    private let snapshot = Snapshot()

    public init(_ keyPath: KeyPath<EnvironmentValues, Value>) {
        self.keyPath = keyPath
    }

    public func update(from environment: EnvironmentValues) {
        snapshot.value = environment[keyPath: keyPath]
    }

    @available(*, unavailable, message: "@Environment works only on classes conforming to EnvironmentOwner")
    public var wrappedValue: Value { fatalError("unavailable") }

    public static subscript<Owner: EnvironmentOwner>(
        _enclosingInstance owner: Owner,
        wrapped _: KeyPath<Owner, Value>,
        storage storage: KeyPath<Owner, Self>
    ) -> Value {
        let wrapper = owner[keyPath: storage]
        if let value = wrapper.snapshot.value { return value }
        let value = owner.environment[keyPath: wrapper.keyPath]
        wrapper.snapshot.value = value
        return value
    }
}
