public import OpenCombine

/// One change to a ``ThingStore``, sent after the list changed.
public enum ThingChange: Sendable, Hashable {
    case add(String)
    case remove(String)
    case replace
}

/// An observable, ordered list of unique strings (Tidings keeps its acronyms in one).
///
/// Confined to the main actor. `things` is `@Published` (will-set order, current value on
/// subscription); ``changes`` tells what happened. The store only keeps the list: what may
/// go in it is its owner's rules (Tidings' acronym rules, in `TidingsModel`, check an edit and
/// then ``apply(_:revision:payload:)`` it). The environment carries the rules' settings.
///
/// `Payload` is what the owner attaches to each change (the server: the change's encoded
/// event; `Never` when nothing is attached), so ``updates`` subscribers get it typed.
///
/// ```swift
/// let store = ThingStore<Never>()
/// store.apply(.add("YOLO"))   // true: added and announced
/// store.apply(.add("YOLO"))   // false: already there, nothing announced
/// ```
@MainActor
public final class ThingStore<Payload: Sendable>: @preconcurrency ObservableObject, EnvironmentOwner {
    @Published public private(set) var things: [String] = []
    /// Declared explicitly so that it is the same publisher on every access.
    public let objectWillChange = ObservableObjectPublisher()
    public var environment: EnvironmentValues
    /// The same things as a set, for O(1) membership checks (the order is in ``things``).
    public private(set) var members = Set<String>()
    private let changeSubject = PassthroughSubject<ThingUpdate<Payload>, Never>()

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
    public var updates: AnyPublisher<ThingUpdate<Payload>, Never> { changeSubject.eraseToAnyPublisher() }

    public func contains(_ thing: String) -> Bool { members.contains(thing) }

    /// Applies an edit the owner already checked by its rules (the server: against a shadow
    /// copy, and made durable first). Returns false,
    /// changing and announcing nothing, when the edit no longer fits (adding a thing that is
    /// present, removing one that is absent, a replacement list with duplicates).
    ///
    /// `revision` and `payload` travel with the change on ``updates``.
    @discardableResult
    public func apply(_ edit: ThingEdit, revision: UInt64 = 0, payload: Payload? = nil) -> Bool {
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
public struct ThingUpdate<Payload: Sendable>: Sendable {
    public let change: ThingChange
    /// The revision the change took in the durable store (0 when it has none).
    public let revision: UInt64
    /// What the owner attached (the server: the change's encoded event), nil otherwise.
    public let payload: Payload?
}

/// A change to a ``ThingStore`` whose things its owner already normalised and validated.
public enum ThingEdit: Sendable, Hashable {
    case add(String)
    case remove(String)
    case replaceAll([String])
}
