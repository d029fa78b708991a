/// The outbound side of ``Preferences``: checking a patch, proposing it to the store; and where
/// another process's changes come in (checked once, there).
extension Preferences {
    /// Checks every entry of a merge patch: unknown keys, wrong types (naming the expected
    /// type) and constraint violations are all reported, sorted by key; nothing is applied.
    /// Each value is checked here once; what passes is typed (``ValidatedChanges``) and is
    /// never checked again on its way through a store and back.
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
            case let .unsupported(_, problem):
                // Inside an object value, name the member; otherwise the expected type.
                let named = declaration.type == .object ? problem : nil
                issues.append(PreferenceIssue(key: key, problem: named ?? .wrongType(expected: declaration.type)))
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
            changedKeys: accepted.filter { current[$0.position] != $0.entry.newValue }.map(\.entry.key))
    }

    /// The outbound verb: checks `patch` (see ``validate(_:)``), writes the keys it changes
    /// through the store in one write, then receives them (``receive(_:)-(some Collection<PreferenceChange<Payload>>)``),
    /// keeping each key's revision. Throws ``PreferenceValidationError`` (nothing written) or
    /// the store's error (nothing applied). Returns the changed keys in declaration order.
    @discardableResult
    public func propose(_ patch: PreferencePatch) throws -> [String] {
        let validated = try validate(patch)
        let storeChanges = validated.storeChanges
        guard !storeChanges.isEmpty else { return [] }
        try store.write(storeChanges)
        let changed = Set(validated.changedKeys)
        return receive(validated.entries.filter { changed.contains($0.key) }.map { entry in
            PreferenceChange(key: entry.key, value: entry.newValue, revision: revision(forKey: entry.key) ?? 0)
        })
    }

    /// Changes another process made to the store (outside input): each value is checked
    /// against its declaration here, once, then received on the same per-key subjects as
    /// local writes. Undeclared keys and values that do not fit are ignored; a removed key
    /// (nil) returns to its default.
    func receiveExternal(_ changes: [String: PreferenceValue?]) {
        var accepted: [(position: Int, change: PreferenceChange<Payload>)] = []
        for (key, value) in changes {
            guard let position = index(ofKey: key) else { continue }
            let declaration = declarations[position]
            let typed: PreferenceValue
            if let value {
                guard case let .success(checked) = declaration.check(value) else { continue }
                typed = checked
            } else {
                typed = declaration.defaultValue
            }
            accepted.append((position, PreferenceChange(key: key, value: typed, revision: revision(forKey: key) ?? 0)))
        }
        receive(accepted.sorted { $0.position < $1.position }.map(\.change))
    }
}

/// One change of one preference, as its key's subject carries it.
public struct PreferenceChange<Payload: Sendable>: Sendable {
    public let key: String
    /// The value, fitting the key's declaration.
    public let value: PreferenceValue
    /// The revision the change took in the durable store (0 when it has none, e.g. a change
    /// proposed to an in-memory store).
    public let revision: UInt64
    /// What the owner attached (the server: the change's encoded event), nil otherwise.
    public let payload: Payload?

    public init(key: String, value: PreferenceValue, revision: UInt64, payload: Payload? = nil) {
        self.key = key
        self.value = value
        self.revision = revision
        self.payload = payload
    }
}
