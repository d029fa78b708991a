public import OpenCombine

/// One change to a ``ThingStore``, sent after the list changed.
public enum ThingChange: Sendable, Hashable {
    case add(String)
    case remove(String)
    case replace
}

/// An observable, ordered list of unique, normalised strings (the acronym list).
///
/// Confined to the main actor. `things` is `@Published` (will-set order, current value on
/// subscription); ``changes`` tells what happened. Text case comes from the owner's
/// environment, read at each operation.
///
/// ```swift
/// let store = ThingStore()
/// try store.add(" yolo ")   // "YOLO"
/// store.environment.textCase = .none
/// ```
@MainActor
public final class ThingStore: @preconcurrency ObservableObject, EnvironmentOwner {
    @Published public private(set) var things: [String] = []
    /// Declared explicitly so that it is the same publisher on every access.
    public let objectWillChange = ObservableObjectPublisher()
    public var environment: EnvironmentValues
    @Environment(\.textCase) public var textCase: TextCase

    private var members = Set<String>()
    private let changeSubject = PassthroughSubject<ThingUpdate, Never>()

    public init(_ things: [String] = [], environment: EnvironmentValues = EnvironmentValues()) {
        self.environment = environment
        // Trusted input (e.g. loaded from the durable store); kept as given.
        self.things = things
        self.members = Set(things)
    }

    /// What changed, after each change.
    public var changes: AnyPublisher<ThingChange, Never> { changeSubject.map(\.change).eraseToAnyPublisher() }

    /// Each change as the owner applied it: what changed, its revision and the owner's payload
    /// (the server attaches the change's encoded event).
    public var updates: AnyPublisher<ThingUpdate, Never> { changeSubject.eraseToAnyPublisher() }

    public func contains(_ thing: String) -> Bool { members.contains(thing) }

    /// The normalised form of `raw` under this store's current text case.
    public func normalize(_ raw: String) -> String {
        updateDynamicProperties()
        return ThingRules.normalize(raw, textCase: textCase)
    }

    /// Normalises, checks and appends `raw`; returns the stored thing.
    @discardableResult
    public func add(_ raw: String) throws(ThingError) -> String {
        updateDynamicProperties()
        let thing = try ThingRules.validateAdd(raw, to: members, textCase: textCase)
        apply(.add(thing))
        return thing
    }

    /// Removes the thing `raw` normalises to; returns it.
    @discardableResult
    public func remove(_ raw: String) throws(ThingError) -> String {
        let thing = normalize(raw)
        guard members.contains(thing) else { throw .notFound(thing) }
        apply(.remove(thing))
        return thing
    }

    /// Replaces the whole list, atomically: on any error nothing changes.
    @discardableResult
    public func replaceAll(_ raws: [String]) throws(ThingError) -> [String] {
        updateDynamicProperties()
        let list = try ThingRules.validateList(raws, textCase: textCase)
        apply(.replaceAll(list))
        return list
    }

    /// Applies an edit the caller already checked with ``ThingRules`` (against a shadow copy)
    /// and made durable — the server's path. Things must be normalised already. Returns false,
    /// changing and announcing nothing, when the edit no longer fits (adding a thing that is
    /// present, removing one that is absent, a replacement list with duplicates).
    ///
    /// `revision` and `payload` travel with the change on ``updates``.
    @discardableResult
    public func apply(_ edit: ThingEdit, revision: UInt64 = 0, payload: (any Sendable)? = nil) -> Bool {
        switch edit {
        case let .add(thing):
            guard !members.contains(thing) else { return false }
            objectWillChange.send()
            members.insert(thing)
            things.append(thing)
            changeSubject.send(ThingUpdate(change: .add(thing), revision: revision, payload: payload))
        case let .remove(thing):
            guard members.contains(thing), let index = things.firstIndex(of: thing) else { return false }
            objectWillChange.send()
            members.remove(thing)
            things.remove(at: index)
            changeSubject.send(ThingUpdate(change: .remove(thing), revision: revision, payload: payload))
        case let .replaceAll(list):
            let newMembers = Set(list)
            guard newMembers.count == list.count else { return false }
            objectWillChange.send()
            members = newMembers
            things = list
            changeSubject.send(ThingUpdate(change: .replace, revision: revision, payload: payload))
        }
        return true
    }
}

/// One change of a ``ThingStore`` as ``ThingStore/updates`` carries it.
public struct ThingUpdate: Sendable {
    public let change: ThingChange
    /// The revision the change took in the durable store (0 when it has none).
    public let revision: UInt64
    /// What the owner attached (the server: the change's encoded event), nil otherwise.
    public let payload: (any Sendable)?
}

/// A change to a ``ThingStore`` whose things are already normalised and validated.
public enum ThingEdit: Sendable, Hashable {
    case add(String)
    case remove(String)
    case replaceAll([String])
}
