public import Observing

/// One preference as the server announces it: a `preference` event, or the record of
/// `GET`/`PUT`/`DELETE /preferences/{key}`.
public struct PreferenceRecord: Sendable, Hashable, Codable {
    public let key: String
    public let value: PreferenceValue
    /// The revision that set this value (0: never set, the default).
    public let revision: UInt64

    public init(key: String, value: PreferenceValue, revision: UInt64) {
        self.key = key
        self.value = value
        self.revision = revision
    }
}

/// A write made through a ``Preference`` binding or a ``UserDefault`` property that the server
/// refused. By the time it is announced the local value is the server's again.
public struct PreferenceWriteFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public let key: String
    /// What the write tried to set (nil: a reset to the default).
    public let attempted: PreferenceValue?
    /// ``TidingsClientError/conflict(_:)`` for a 412, ``TidingsClientError/refused(_:)`` for a
    /// 422, or whatever else stopped it.
    public let error: TidingsClientError

    public var description: String { "writing \(key): \(error)" }
}
