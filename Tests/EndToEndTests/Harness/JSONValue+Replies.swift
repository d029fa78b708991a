import TestFixtures

extension EventStreamReader.Event {
    /// `data` as a ``JSONValue``.
    var value: JSONValue? { JSONValue.parse(Array(data.utf8)) }
}
