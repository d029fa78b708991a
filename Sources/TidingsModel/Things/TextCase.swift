public import Observing

/// How things are case-normalised (`--text-case`, ``ThingRules/normalize(_:textCase:)``).
public enum TextCase: String, Sendable, Hashable, CaseIterable {
    /// Unicode full upper-casing, the same in every locale: "straße" → "STRASSE".
    case upper
    /// Kept as typed (after trimming).
    case none
}

enum TextCaseKey: EnvironmentKey {
    static let defaultValue: TextCase = .upper
}

extension EnvironmentValues {
    /// How a ``ThingStore`` normalises text (default ``TextCase/upper``).
    public var textCase: TextCase {
        get { self[TextCaseKey.self] }
        set { self[TextCaseKey.self] = newValue }
    }
}
