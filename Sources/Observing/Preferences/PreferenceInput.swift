/// One key's value as a client sent it, decoded without knowing the key's type, so that
/// validation can name the key and the expected type rather than failing the whole body.
///
/// Decode a request body's value as `PreferenceInput` (or a whole merge patch as
/// ``PreferencePatch``), then pass it to ``Preferences/validate(_:)``.
public enum PreferenceInput: Sendable, Hashable, Decodable {
    /// JSON `null`: reset the key to its default (merge-patch semantics).
    case reset
    /// A scalar or object JSON value, not yet brought to the key's declared type.
    case value(PreferenceValue)
    /// An array, or an object holding an array or null: never a valid preference value. `problem`
    /// says where inside an object the culprit is (nil for a whole value of the wrong kind).
    case unsupported(kind: String, problem: PreferenceProblem? = nil)

    public init(from decoder: any Decoder) throws {
        #if DEBUG
        ValueWork.countDecode()
        #endif
        self.init(json: try JSONValue(from: decoder))
    }
}

/// A JSON merge patch of preferences: `{"key": value, "other": null}`.
public struct PreferencePatch: Sendable, Hashable, Decodable {
    public var entries: [String: PreferenceInput]

    public init(_ entries: [String: PreferenceInput]) {
        self.entries = entries
    }

    /// A patch setting each key to its value, or resetting it to its default (nil).
    public init(values: [String: PreferenceValue?]) {
        entries = values.mapValues { $0.map(PreferenceInput.value) ?? .reset }
    }

    public init(from decoder: any Decoder) throws {
        entries = try decoder.singleValueContainer().decode([String: PreferenceInput].self)
    }
}

/// Changes that passed ``Preferences/validate(_:)``: every value has its
/// key's declared type and meets its constraints, so they are not checked again: make them
/// durable, then give the container the changes the store made (``Preferences/receive(_:)``).
public struct ValidatedChanges: Sendable, Hashable {
    /// One validated key: the value it will have and what is stored for it.
    public struct Entry: Sendable, Hashable {
        public let key: String
        /// The value the key will have (the default for a reset).
        public let newValue: PreferenceValue
        /// What to write to the store: nil means "remove the stored value" (a reset).
        public let storedValue: PreferenceValue?
    }

    /// Every validated key, in declaration order.
    public let entries: [Entry]
    /// The keys whose value differs from the current one *at validation time*, in
    /// declaration order. Empty means applying would change and announce nothing.
    public let changedKeys: [String]

    /// The store write for the changed keys (nil value = remove).
    public var storeChanges: [String: PreferenceValue?] {
        let changed = Set(changedKeys)
        var result: [String: PreferenceValue?] = [:]
        for entry in entries where changed.contains(entry.key) { result[entry.key] = .some(entry.storedValue) }
        return result
    }
}
