public import OpenCombine

/// Holds an observable object inside another and forwards the inner object's
/// `objectWillChange` to the owner's, synchronously, so the owner announces before the inner
/// value changes (will-set order).
///
/// ```swift
/// final class Screen: ObservableObject {
///     let objectWillChange = ObservableObjectPublisher()
///     @PublishedObject var things = ThingStore<Never>()
///     init() { _ = things }   // start forwarding now (see below)
/// }
/// ```
/// The subscription lives in the wrapper's storage inside the owner, so it is released with
/// the owner (it holds the owner weakly: no retain cycle). It is set up on the owner's first
/// read or write of the property, because the enclosing-instance subscript is the only hook a
/// wrapper gets; read the property once in the owner's `init`. Replacing the object announces
/// the change and re-subscribes to the new one. Declare `objectWillChange` explicitly in the
/// owner when it has no `@Published` fields (OpenCombine would otherwise hand out a new,
/// unconnected publisher on each access).
@MainActor
@propertyWrapper
public struct PublishedObject<Value: ObservableObject> {
    private var object: Value
    private var forwarding: AnyCancellable?

    public init(wrappedValue: Value) {
        object = wrappedValue
    }

    @available(*, unavailable, message: "@PublishedObject works only on ObservableObject classes")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        set { fatalError("unavailable") }
    }

    public static subscript<Owner: ObservableObject>(
        _enclosingInstance owner: Owner,
        wrapped _: ReferenceWritableKeyPath<Owner, Value>,
        storage storage: ReferenceWritableKeyPath<Owner, Self>
    ) -> Value where Owner.ObjectWillChangePublisher == ObservableObjectPublisher {
        get {
            connect(owner, storage)
            return owner[keyPath: storage].object
        }
        set {
            owner.objectWillChange.send()
            owner[keyPath: storage].forwarding = nil
            owner[keyPath: storage].object = newValue
            connect(owner, storage)
        }
    }

    private static func connect<Owner: ObservableObject>(
        _ owner: Owner, _ storage: ReferenceWritableKeyPath<Owner, Self>
    ) where Owner.ObjectWillChangePublisher == ObservableObjectPublisher {
        guard owner[keyPath: storage].forwarding == nil else { return }
        owner[keyPath: storage].forwarding = owner[keyPath: storage].object.objectWillChange
            .sink { [weak owner] _ in owner?.objectWillChange.send() }
    }
}
