/// A Swift type that can be stored as a preference (`Bool`, `Int`, `Double`, `String`).
public protocol PreferenceRepresentable: Sendable, Equatable {
    /// The declared type for properties of this Swift type.
    static var preferenceType: PreferenceType { get }
    /// Reads a value of the declared type; nil for any other case.
    init?(preferenceValue: PreferenceValue)
    var preferenceValue: PreferenceValue { get }
}

extension Bool: PreferenceRepresentable {
    public static var preferenceType: PreferenceType { .boolean }
    public init?(preferenceValue: PreferenceValue) {
        guard case let .boolean(b) = preferenceValue else { return nil }
        self = b
    }
    public var preferenceValue: PreferenceValue { .boolean(self) }
}

extension Int: PreferenceRepresentable {
    public static var preferenceType: PreferenceType { .integer }
    public init?(preferenceValue: PreferenceValue) {
        guard case let .integer(i) = preferenceValue.coerced(to: .integer) else { return nil }
        self = i
    }
    public var preferenceValue: PreferenceValue { .integer(self) }
}

extension Double: PreferenceRepresentable {
    public static var preferenceType: PreferenceType { .number }
    public init?(preferenceValue: PreferenceValue) {
        guard case let .number(d) = preferenceValue.coerced(to: .number) else { return nil }
        self = d
    }
    public var preferenceValue: PreferenceValue { .number(self) }
}

extension String: PreferenceRepresentable {
    public static var preferenceType: PreferenceType { .string }
    public init?(preferenceValue: PreferenceValue) {
        guard case let .string(s) = preferenceValue else { return nil }
        self = s
    }
    public var preferenceValue: PreferenceValue { .string(self) }
}
