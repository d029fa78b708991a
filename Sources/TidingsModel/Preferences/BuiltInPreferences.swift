public import Observing
public import OpenCombine

/// The server's built-in preference set (API.md), declared once, here. The container
/// (`preferences`) derives its declarations from these wrappers.
///
/// ```swift
/// let builtIn = BuiltInPreferences(store: store)
/// builtIn.age = 6                       // proposed: validated, written through, announced
/// builtIn.preferences.declarations      // the list the server serves
/// ```
@MainActor
public final class BuiltInPreferences: PreferencesBacked, @preconcurrency ObservableObject {
    @UserDefault("should_show_hello_world") public var shouldShowHelloWorld = false
    @UserDefault("onboardingCompleted") public var onboardingCompleted = false
    @UserDefault("promptedForProVersion") public var promptedForProVersion = false
    @UserDefault("name") public var name = "fat"
    @UserDefault("age") public var age = 5
    @UserDefault("readyForAction") public var readyForAction = false
    @UserDefault("speed") public var speed = 0.0
    @UserDefault("numberOfItems") public var numberOfItems = 0

    private let store: any KeyValueStore

    /// The container behind the properties above, created on first use from their declarations.
    public private(set) lazy var preferences: Preferences<Never> = .declared(by: self, store: store)

    /// The container's publisher. Declared explicitly: OpenCombine would otherwise synthesise
    /// a fresh, unconnected publisher on every access for a class without `@Published` fields.
    public var objectWillChange: ObservableObjectPublisher { preferences.objectWillChange }

    public init(store: any KeyValueStore = InMemoryKeyValueStore()) {
        self.store = store
    }
}

/// `@Preference` over the built-in set, so the root can be left out: `@BuiltInPreference(\.name) var name`.
public typealias BuiltInPreference<Value: PreferenceRepresentable> = Preference<BuiltInPreferences, Value>
