import OpenCombine

/// An object whose ``UserDefault`` properties read and write `preferences`.
@MainActor
public protocol PreferencesBacked: AnyObject {
    /// What the container's changes carry (`Never`: nothing).
    associatedtype ChangePayload: Sendable
    var preferences: Preferences<ChangePayload> { get }
}

/// Declares one preference on a ``PreferencesBacked`` class, and reads/writes it there.
///
/// ```swift
/// final class AppPreferences: PreferencesBacked {
///     @UserDefault("age", minimum: 0) var age = 5
///     lazy var preferences = Preferences<Never>.declared(by: self)
/// }
/// ```
/// The declaration (key, type from the Swift type, default from the initial value,
/// constraints) is read by ``PreferenceDeclaration/declarations(of:)``; reads and writes go
/// through the enclosing-instance subscript to the owner's container, so the property itself
/// holds no value. A write is a proposal (``Preferences/propose(_:)``): one the declaration
/// refuses (out of its constraints) is ignored and the property keeps its value; propose a
/// patch yourself to get the error.
@MainActor
@propertyWrapper
public struct UserDefault<Value: PreferenceRepresentable>: PreferenceDeclaring {
    public let key: String
    public let defaultValue: Value
    let declaration: PreferenceDeclaration

    public init(
        wrappedValue: Value, _ key: String, description: String? = nil,
        minimum: Double? = nil, maximum: Double? = nil, maxLength: Int? = nil, allowed: [Value]? = nil
    ) {
        self.key = key
        self.defaultValue = wrappedValue
        self.declaration = PreferenceDeclaration(
            key: key, type: Value.preferenceType, defaultValue: wrappedValue.preferenceValue,
            description: description, minimum: minimum, maximum: maximum, maxLength: maxLength,
            allowedValues: allowed?.map(\.preferenceValue))
    }

    @available(*, unavailable, message: "@UserDefault works only on classes conforming to PreferencesBacked")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    public static subscript<Owner: PreferencesBacked>(
        _enclosingInstance owner: Owner,
        wrapped _: ReferenceWritableKeyPath<Owner, Value>,
        storage storage: ReferenceWritableKeyPath<Owner, Self>
    ) -> Value {
        get {
            let wrapper = owner[keyPath: storage]
            KeyAccessRecorder.record(wrapper.key)
            return owner.preferences.value(forKey: wrapper.key).flatMap(Value.init(preferenceValue:)) ?? wrapper.defaultValue
        }
        set {
            let key = owner[keyPath: storage].key
            _ = try? owner.preferences.propose(PreferencePatch([key: .value(newValue.preferenceValue)]))
        }
    }
}

/// The `@CloudStorage` idea: a preference whose store is shared with other processes.
/// Syncing is the store's job (``KeyValueStore/externalChanges``), not the wrapper's, so this
/// is the same wrapper; the name documents intent at the declaration.
public typealias CloudStorage<Value: PreferenceRepresentable> = UserDefault<Value>

/// Finds which key a key path reads, by recording the keys ``UserDefault`` getters touch.
/// This is how `@Preference(\.name)` learns the key "name" without a second list.
@MainActor
enum KeyAccessRecorder {
    private static var recorded: [String]?

    static func record(_ key: String) {
        recorded?.append(key)
    }

    static func keys(touchedBy body: () -> Void) -> [String] {
        let outer = recorded
        recorded = []
        body()
        let keys = recorded ?? []
        recorded = outer
        return keys
    }
}

extension Preferences {
    /// The container declared by `object`'s ``UserDefault`` wrappers. A Swift declaration
    /// that breaks its own constraints is a programming error and stops the program.
    ///
    /// ```swift
    /// lazy var preferences = Preferences<Never>.declared(by: self)
    /// ```
    public static func declared(by object: AnyObject, store: any KeyValueStore = InMemoryKeyValueStore()) -> Preferences {
        do {
            return try Preferences(declarations: PreferenceDeclaration.declarations(of: object), store: store)
        } catch {
            preconditionFailure("invalid @UserDefault declarations in \(type(of: object)): \(error)")
        }
    }
}

extension PreferenceDeclaration {
    /// The declarations made by the ``UserDefault`` wrappers of `object` (and its
    /// superclasses), in source order — the single place a Swift preference set is declared.
    public static func declarations(of object: Any) -> [PreferenceDeclaration] {
        var result: [PreferenceDeclaration] = []
        var mirror: Mirror? = Mirror(reflecting: object)
        var levels: [Mirror] = []
        while let m = mirror {
            levels.append(m)
            mirror = m.superclassMirror
        }
        for level in levels.reversed() {
            for child in level.children {
                if let declaring = child.value as? any PreferenceDeclaring { result.append(declaring.declaration) }
            }
        }
        return result
    }
}

/// Implemented by ``UserDefault`` so ``PreferenceDeclaration/declarations(of:)`` can find declarations.
protocol PreferenceDeclaring {
    var declaration: PreferenceDeclaration { get }
}
