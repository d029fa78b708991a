public import Foundation
public import OpenCombine

/// The settings container (the `@AppStorage` replacement): declared keys with type, default
/// and constraints, one change subject per key, a pluggable store.
///
/// Confined to the main actor (the server's event loop; `@preconcurrency ObservableObject`
/// traps if `objectWillChange` is touched elsewhere). A change to key A is sent on A's own
/// `CurrentValueSubject`, so observers of other keys run no code at all.
///
/// `Payload` is what the owner attaches to each change it receives (the server: the change's
/// encoded event; `Never` when nothing is attached), so subscribers get it typed.
///
/// With TidingsModel's built-in set (`BuiltInPreferences`, declared with ``UserDefault``):
///
/// ```swift
/// let prefs = BuiltInPreferences().preferences
/// let c = prefs.publisher(forKey: "age")!.sink { print($0) }  // 5, then each change
/// try prefs.propose(PreferencePatch(values: ["age": .integer(6)]))
/// ```
///
/// Two verbs, one each way:
/// - outbound, ``propose(_:)``: check a patch (every bad key reported at once), write it
///   through the store, receive it. A durable server instead checks with ``validate(_:)`` on
///   the loop and commits off it.
/// - inbound, ``receive(_:)``: a change that is already durable (the server's store, another
///   process's write through ``KeyValueStore/externalChanges``, a proposal the store took) is
///   applied and announced. Its value must already fit its declaration: outside input is
///   checked once, where it enters.
@MainActor
public final class Preferences<Payload: Sendable>: @preconcurrency ObservableObject {
    /// Sent before any value changes (will-set order), once per received batch.
    public let objectWillChange = ObservableObjectPublisher()
    /// Every declared preference, in declaration order.
    public let declarations: [PreferenceDeclaration]
    /// The store written by ``propose(_:)`` and read at creation.
    public let store: any KeyValueStore

    private let positions: [String: Int]
    /// The longest declared key in UTF-8 bytes: a longer key is unknown without hashing it
    /// (hashing a client's 16 KiB path segment of combining marks is quadratic).
    private let longestKeyBytes: Int
    private(set) var current: [PreferenceValue]
    private var revisions: [UInt64]
    /// One subject per key, carrying the change itself (value, revision, the owner's payload).
    private let subjects: [CurrentValueSubject<PreferenceChange<Payload>, Never>]
    private let changedKeySubject = PassthroughSubject<String, Never>()
    private var externalSubscription: AnyCancellable?

    /// A container for `declarations`, starting from the values found in `store` (a stored
    /// value that no longer fits its declaration is ignored: the default applies).
    public init(declarations: [PreferenceDeclaration], store: any KeyValueStore = InMemoryKeyValueStore()) throws(PreferenceSchemaError) {
        var positions: [String: Int] = [:]
        for (i, d) in declarations.enumerated() {
            if positions[d.key] != nil { throw PreferenceSchemaError(key: d.key, problem: "declared twice") }
            if let problem = d.declarationProblems().first { throw PreferenceSchemaError(key: d.key, problem: problem) }
            positions[d.key] = i
        }
        guard !declarations.isEmpty else { throw PreferenceSchemaError(key: nil, problem: "declares no preferences") }
        self.declarations = declarations
        self.positions = positions
        longestKeyBytes = declarations.map(\.key.utf8.count).max() ?? 0
        self.store = store
        let initial = declarations.map { d in
            store.value(forKey: d.key).flatMap { try? d.check($0).get() } ?? d.defaultValue
        }
        current = initial
        revisions = Array(repeating: 0, count: initial.count)
        subjects = zip(declarations, initial).map { declaration, value in
            CurrentValueSubject(PreferenceChange(key: declaration.key, value: value, revision: 0))
        }
        // The enclosing-instance subscript only sees reads and writes made through the
        // owner, so changes made by other processes must come in through the store.
        externalSubscription = store.externalChanges.sink { [weak self] changes in
            self?.receiveExternal(changes)
        }
    }

    /// A container for a `--preferences FILE` schema (see ``PreferenceDeclaration/schema(fromJSON:)``).
    public convenience init(schemaJSON: Data, store: any KeyValueStore = InMemoryKeyValueStore()) throws(PreferenceSchemaError) {
        try self.init(declarations: PreferenceDeclaration.schema(fromJSON: schemaJSON), store: store)
    }

    // MARK: Reading

    /// False when `key` is longer than every declared key (so unknown), decided without hashing
    /// it: check this before using a client's key as a dictionary key of your own.
    public func mayBeKey(_ key: String) -> Bool {
        key.utf8.count <= longestKeyBytes
    }

    /// `key`'s index in ``declarations``, or nil for an unknown key.
    func index(ofKey key: String) -> Int? {
        mayBeKey(key) ? positions[key] : nil
    }

    /// The declaration for `key`, or nil for an unknown key.
    public func declaration(forKey key: String) -> PreferenceDeclaration? {
        index(ofKey: key).map { declarations[$0] }
    }

    /// The current value of `key` (its default until set), or nil for an unknown key.
    public func value(forKey key: String) -> PreferenceValue? {
        index(ofKey: key).map { current[$0] }
    }

    /// Every key's current value.
    public var values: [String: PreferenceValue] {
        var result: [String: PreferenceValue] = [:]
        for (i, d) in declarations.enumerated() { result[d.key] = current[i] }
        return result
    }

    /// `key`'s publisher: the current value on subscription, then each change (only changes
    /// of this key). Nil for an unknown key. Values are delivered on the main actor.
    public func publisher(forKey key: String) -> AnyPublisher<PreferenceValue, Never>? {
        index(ofKey: key).map { subjects[$0].map(\.value).eraseToAnyPublisher() }
    }

    /// `key`'s changes as they were received — value, revision and payload (the server
    /// attaches each change's encoded event, so subscribers send what they receive): the
    /// latest on subscription, then each change of this key only. Nil for an unknown key.
    public func changes(forKey key: String) -> AnyPublisher<PreferenceChange<Payload>, Never>? {
        index(ofKey: key).map { subjects[$0].eraseToAnyPublisher() }
    }

    /// Each changed key, once per change, after the new value was sent on the key's own
    /// publisher (local writes and external changes alike).
    public var changedKeys: AnyPublisher<String, Never> { changedKeySubject.eraseToAnyPublisher() }

    /// The revision of `key`'s last received change (0 before any), or nil for an unknown key.
    public func revision(forKey key: String) -> UInt64? {
        index(ofKey: key).map { revisions[$0] }
    }

    /// Sets the revisions the values loaded at creation carry (from a durable store).
    public func seedRevisions(_ seeded: [String: UInt64]) {
        for (key, revision) in seeded {
            guard let position = index(ofKey: key) else { continue }
            revisions[position] = revision
            subjects[position].value = PreferenceChange(key: key, value: current[position], revision: revision)
        }
    }

    // MARK: Inbound: the one way a value changes

    /// Applies one change that is already durable (see ``receive(_:)-(some Collection<PreferenceChange<Payload>>)``).
    /// Returns false (nothing announced) for an undeclared key or a change already received.
    @discardableResult
    public func receive(_ change: PreferenceChange<Payload>) -> Bool {
        // The server's path, once per revision: the batch's rules without building a batch.
        guard let position = index(ofKey: change.key),
              current[position] != change.value || revisions[position] != change.revision else { return false }
        objectWillChange.send()
        current[position] = change.value
        revisions[position] = change.revision
        subjects[position].send(change)
        changedKeySubject.send(change.key)
        return true
    }

    /// Applies changes that are already durable (the server's one change path, another
    /// process's write, a proposal the store took) atomically and announces them:
    /// `objectWillChange` once, then every value is updated, then each changed key is sent
    /// once on its own subject (with the change's payload) and on ``changedKeys``.
    ///
    /// Every value must already fit its key's declaration: the caller checked it where it
    /// came in (``validate(_:)`` for a proposal, ``PreferenceDeclaration/check(_:)`` for
    /// outside input) — it is not checked again. A change carrying the value and revision the
    /// key already has is no change; one with a new revision is announced even when the value
    /// is equal (it is news: a new revision). Undeclared keys are skipped. Returns the changed
    /// keys in the order given.
    @discardableResult
    public func receive(_ changes: some Collection<PreferenceChange<Payload>>) -> [String] {
        var accepted: [(position: Int, change: PreferenceChange<Payload>)] = []
        for change in changes {
            guard let position = index(ofKey: change.key),
                  current[position] != change.value || revisions[position] != change.revision else { continue }
            accepted.append((position, change))
        }
        guard !accepted.isEmpty else { return [] }
        objectWillChange.send()
        for (position, change) in accepted {
            current[position] = change.value
            revisions[position] = change.revision
        }
        for (position, change) in accepted {
            // An observer may already have changed this key again: then send what is current.
            if current[position] == change.value, revisions[position] == change.revision {
                subjects[position].send(change)
            } else {
                subjects[position].send(PreferenceChange(key: change.key, value: current[position], revision: revisions[position]))
            }
        }
        for (_, change) in accepted { changedKeySubject.send(change.key) }
        return accepted.map(\.change.key)
    }
}
