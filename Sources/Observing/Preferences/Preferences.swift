public import Foundation
public import OpenCombine

/// The settings container (the `@AppStorage` replacement): declared keys with type, default
/// and constraints, one change subject per key, a pluggable store.
///
/// Confined to the main actor (the server's event loop; `@preconcurrency ObservableObject`
/// traps if `objectWillChange` is touched elsewhere). A change to key A is sent on A's own
/// `CurrentValueSubject`, so observers of other keys run no code at all.
///
/// With TidingsModel's built-in set (`BuiltInPreferences`, declared with ``UserDefault``):
///
/// ```swift
/// let prefs = BuiltInPreferences().preferences
/// let c = prefs.publisher(forKey: "age")!.sink { print($0) }  // 5, then each change
/// try prefs.set(.integer(6), forKey: "age")
/// ```
///
/// Two ways to write:
/// - ``set(_:forKey:)``, ``reset(_:)``, ``update(_:)``: validate, write through the store, apply.
/// - the server's split: ``validate(_:)-(PreferencePatch)`` on the loop, make it durable off the
///   loop, then ``apply(_:)`` (memory + announcements only; it does not write the store).
@MainActor
public final class Preferences: @preconcurrency ObservableObject {
    /// Sent before any value changes (will-set order), once per applied batch.
    public let objectWillChange = ObservableObjectPublisher()
    /// Every declared preference, in declaration order.
    public let declarations: [PreferenceDeclaration]
    /// The store written by ``set(_:forKey:)``/``update(_:)`` and read at creation.
    public let store: any KeyValueStore

    private let positions: [String: Int]
    /// The longest declared key in UTF-8 bytes: a longer key is unknown without hashing it
    /// (hashing a client's 16 KiB path segment of combining marks is quadratic).
    private let longestKeyBytes: Int
    private var current: [PreferenceValue]
    private var revisions: [UInt64]
    /// One subject per key, carrying the change itself (value, revision, the owner's payload).
    private let subjects: [CurrentValueSubject<PreferenceChange, Never>]
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
            CurrentValueSubject(PreferenceChange(key: declaration.key, value: value, revision: 0, payload: nil))
        }
        // The enclosing-instance subscript only sees reads and writes made through the
        // owner, so changes made by other processes must come in through the store.
        externalSubscription = store.externalChanges.sink { [weak self] changes in
            self?.applyExternal(changes)
        }
    }

    /// A container for a `--preferences FILE` schema (see ``PreferenceDeclaration/schema(fromJSON:)``).
    public convenience init(schemaJSON: Data, store: any KeyValueStore = InMemoryKeyValueStore()) throws(PreferenceSchemaError) {
        try self.init(declarations: PreferenceDeclaration.schema(fromJSON: schemaJSON), store: store)
    }

    /// The declarations made by the ``UserDefault`` wrappers of `object` (and its
    /// superclasses), in source order — the single place a Swift preference set is declared.
    public nonisolated static func declarations(of object: Any) -> [PreferenceDeclaration] {
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

    // MARK: Reading

    /// False when `key` is longer than every declared key (so unknown), decided without hashing
    /// it: check this before using a client's key as a dictionary key of your own.
    public func mayBeKey(_ key: String) -> Bool {
        key.utf8.count <= longestKeyBytes
    }

    /// `key`'s index in ``declarations``, or nil for an unknown key.
    private func index(ofKey key: String) -> Int? {
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

    /// `key`'s changes as the owner announced them — value, revision and payload (the server
    /// attaches each change's encoded event, so subscribers send what they receive): the
    /// latest on subscription, then each change of this key only. Nil for an unknown key.
    public func changes(forKey key: String) -> AnyPublisher<PreferenceChange, Never>? {
        index(ofKey: key).map { subjects[$0].eraseToAnyPublisher() }
    }

    /// Each changed key, once per change, after the new value was sent on the key's own
    /// publisher (local writes and external changes alike).
    public var changedKeys: AnyPublisher<String, Never> { changedKeySubject.eraseToAnyPublisher() }

    // MARK: Validating and applying

    /// Checks every change (nil = reset to default) and reports every bad key at once.
    public func validate(_ changes: [String: PreferenceValue?]) throws(PreferenceValidationError) -> ValidatedChanges {
        try validate(PreferencePatch(changes.mapValues { $0.map(PreferenceInput.value) ?? .reset }))
    }

    /// Checks every entry of a merge patch: unknown keys, wrong types (naming the expected
    /// type) and constraint violations are all reported, sorted by key; nothing is applied.
    public func validate(_ patch: PreferencePatch) throws(PreferenceValidationError) -> ValidatedChanges {
        var issues: [PreferenceIssue] = []
        var accepted: [(position: Int, entry: ValidatedChanges.Entry)] = []
        for (key, input) in patch.entries {
            guard let position = index(ofKey: key) else {
                issues.append(PreferenceIssue(key: key, problem: .unknownKey))
                continue
            }
            let declaration = declarations[position]
            switch input {
            case .reset:
                accepted.append((position, .init(key: key, newValue: declaration.defaultValue, storedValue: nil)))
            case .unsupported:
                issues.append(PreferenceIssue(key: key, problem: .wrongType(expected: declaration.type)))
            case let .value(raw):
                switch declaration.check(raw) {
                case let .success(typed): accepted.append((position, .init(key: key, newValue: typed, storedValue: typed)))
                case let .failure(problem): issues.append(PreferenceIssue(key: key, problem: problem))
                }
            }
        }
        guard issues.isEmpty else { throw PreferenceValidationError(issues: issues) }
        accepted.sort { $0.position < $1.position }
        return ValidatedChanges(
            entries: accepted.map(\.entry),
            changedKeys: accepted.filter { current[$0.position] != $0.entry.newValue }.map(\.entry.key),
            containerID: ObjectIdentifier(self))
    }

    /// Applies validated changes atomically in memory and announces them: `objectWillChange`
    /// first, then every value is updated, then each changed key is sent once on its own
    /// publisher and on ``changedKeys``. Keys whose value equals the current one are skipped.
    /// Does not write the store. Returns the changed keys in declaration order.
    @discardableResult
    public func apply(_ validated: ValidatedChanges) -> [String] {
        precondition(validated.containerID == ObjectIdentifier(self), "changes were validated by another Preferences container")
        let changed = validated.entries.compactMap { entry -> (Int, PreferenceValue)? in
            let position = index(ofKey: entry.key)!
            return current[position] == entry.newValue ? nil : (position, entry.newValue)
        }
        guard !changed.isEmpty else { return [] }
        objectWillChange.send()
        for (position, value) in changed { current[position] = value }
        for (position, _) in changed {
            // Send what is current now: an observer may already have written this key again.
            subjects[position].send(PreferenceChange(key: declarations[position].key, value: current[position],
                                                     revision: revisions[position], payload: nil))
        }
        for (position, _) in changed { changedKeySubject.send(declarations[position].key) }
        return changed.map { declarations[$0.0].key }
    }

    /// Applies one change that is already durable elsewhere (the server's one change path: a
    /// change read back from its store, or a remote store's change), with the revision it took
    /// and an opaque `payload` for subscribers of ``changes(forKey:)``. `value` must already
    /// fit the key's declaration (check it with ``PreferenceDeclaration/check(_:)``). The change
    /// is announced even when the value equals the current one: it is a new revision.
    /// Returns false (nothing announced) for an undeclared key.
    @discardableResult
    public func receive(key: String, value: PreferenceValue, revision: UInt64, payload: (any Sendable)? = nil) -> Bool {
        guard let position = index(ofKey: key) else { return false }
        objectWillChange.send()
        current[position] = value
        revisions[position] = revision
        subjects[position].send(PreferenceChange(key: key, value: value, revision: revision, payload: payload))
        changedKeySubject.send(key)
        return true
    }

    /// The revision of `key`'s last change received with ``receive(key:value:revision:payload:)``
    /// (0 before any), or nil for an unknown key.
    public func revision(forKey key: String) -> UInt64? {
        index(ofKey: key).map { revisions[$0] }
    }

    /// Sets the revisions the values loaded at creation carry (from a durable store).
    public func seedRevisions(_ seeded: [String: UInt64]) {
        for (key, revision) in seeded {
            guard let position = index(ofKey: key) else { continue }
            revisions[position] = revision
            let value = current[position]
            subjects[position].value = PreferenceChange(key: key, value: value, revision: revision, payload: nil)
        }
    }

    /// Validates, writes the changed keys through the store, then applies. Throws
    /// ``PreferenceValidationError`` (nothing written) or the store's error (nothing applied).
    @discardableResult
    public func update(_ changes: [String: PreferenceValue?]) throws -> [String] {
        let validated = try validate(changes)
        let storeChanges = validated.storeChanges
        if !storeChanges.isEmpty { try store.write(storeChanges) }
        return apply(validated)
    }

    /// Sets one key (see ``update(_:)``).
    public func set(_ value: PreferenceValue, forKey key: String) throws {
        try update([key: value])
    }

    /// Resets one key to its default (see ``update(_:)``).
    public func reset(_ key: String) throws {
        try update([key: nil])
    }

    /// Changes another process made to the store: the store already holds them, so they are
    /// only applied and announced, on the same per-key subjects as local writes. Keys this
    /// container does not declare and values that do not fit their declaration are ignored.
    private func applyExternal(_ changes: [String: PreferenceValue?]) {
        var accepted: [String: PreferenceValue?] = [:]
        for (key, value) in changes {
            guard let declaration = declaration(forKey: key) else { continue }
            if let value {
                guard let typed = try? declaration.check(value).get() else { continue }
                accepted[key] = .some(typed)
            } else {
                accepted[key] = .some(nil)
            }
        }
        if let validated = try? validate(accepted) { apply(validated) }
    }
}

/// One change of one preference, as its key's subject carries it.
public struct PreferenceChange: Sendable {
    public let key: String
    public let value: PreferenceValue
    /// The revision the change took in the durable store (0 when it has none, e.g. a change made
    /// through the container's own setters over an in-memory store).
    public let revision: UInt64
    /// What the owner attached (the server: the change's encoded event), nil otherwise.
    public let payload: (any Sendable)?

    public init(key: String, value: PreferenceValue, revision: UInt64, payload: (any Sendable)?) {
        self.key = key
        self.value = value
        self.revision = revision
        self.payload = payload
    }
}

/// Implemented by ``UserDefault`` so ``Preferences/declarations(of:)`` can find declarations.
protocol PreferenceDeclaring {
    var declaration: PreferenceDeclaration { get }
}
