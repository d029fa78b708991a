public import OpenCombine

/// An object that reads preferences of one ``PreferencesBacked`` source through ``Preference``.
@MainActor
public protocol PreferencesReader: AnyObject {
    associatedtype PreferenceSource: PreferencesBacked
    var preferenceSource: PreferenceSource { get }
}

/// A typed view of one preference by key path: `@Preference(\.name) var name`.
///
/// The value proxies the source's container; `$name` is a ``PreferenceBinding`` — a get/set
/// pair plus the publisher of that key alone (current value, then each change).
///
/// With `BuiltInPreferences` (TidingsModel's built-in set) as the source:
///
/// ```swift
/// final class Greeter: PreferencesReader {
///     let preferenceSource: BuiltInPreferences
///     @Preference(\BuiltInPreferences.name) var name
///     init(_ source: BuiltInPreferences) { preferenceSource = source }
/// }
/// greeter.$name.publisher.sink { print("name is", $0) }
/// ```
@MainActor
@propertyWrapper
public struct Preference<Source: PreferencesBacked, Value: PreferenceRepresentable> {
    public let keyPath: ReferenceWritableKeyPath<Source, Value>
    private var cachedKey: String?

    public init(_ keyPath: ReferenceWritableKeyPath<Source, Value>) {
        self.keyPath = keyPath
    }

    @available(*, unavailable, message: "@Preference works only on classes conforming to PreferencesReader")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    @available(*, unavailable, message: "@Preference works only on classes conforming to PreferencesReader")
    public var projectedValue: PreferenceBinding<Value> { fatalError("unavailable") }

    public static subscript<Owner: PreferencesReader>(
        _enclosingInstance owner: Owner,
        wrapped _: ReferenceWritableKeyPath<Owner, Value>,
        storage storage: ReferenceWritableKeyPath<Owner, Self>
    ) -> Value where Owner.PreferenceSource == Source {
        get { owner.preferenceSource[keyPath: owner[keyPath: storage].keyPath] }
        set { owner.preferenceSource[keyPath: owner[keyPath: storage].keyPath] = newValue }
    }

    public static subscript<Owner: PreferencesReader>(
        _enclosingInstance owner: Owner,
        projected _: KeyPath<Owner, PreferenceBinding<Value>>,
        storage storage: ReferenceWritableKeyPath<Owner, Self>
    ) -> PreferenceBinding<Value> where Owner.PreferenceSource == Source {
        let source = owner.preferenceSource
        let keyPath = owner[keyPath: storage].keyPath
        let key: String
        if let cached = owner[keyPath: storage].cachedKey {
            key = cached
        } else {
            // The key path names a @UserDefault property; reading it once tells us its key.
            guard let found = KeyAccessRecorder.keys(touchedBy: { _ = source[keyPath: keyPath] }).last else {
                preconditionFailure("@Preference(\(keyPath)) does not lead to a @UserDefault property")
            }
            owner[keyPath: storage].cachedKey = found
            key = found
        }
        let publisher = source.preferences.publisher(forKey: key)!
            .compactMap(Value.init(preferenceValue:))
            .eraseToAnyPublisher()
        return PreferenceBinding(
            key: key,
            get: { source[keyPath: keyPath] },
            set: { source[keyPath: keyPath] = $0 },
            publisher: publisher)
    }
}

/// A binding-like get/set pair for one preference, with the publisher of that key alone.
@MainActor
public struct PreferenceBinding<Value> {
    public let key: String
    private let get: @MainActor () -> Value
    private let set: @MainActor (Value) -> Void
    /// The current value on subscription, then each change of this key only.
    public let publisher: AnyPublisher<Value, Never>

    public init(key: String, get: @escaping @MainActor () -> Value, set: @escaping @MainActor (Value) -> Void, publisher: AnyPublisher<Value, Never>) {
        self.key = key
        self.get = get
        self.set = set
        self.publisher = publisher
    }

    public var wrappedValue: Value {
        get { get() }
        nonmutating set { set(newValue) }
    }
}
