import TestFixtures

extension HTTPReply {
    /// The body as a ``JSONValue`` (nil when it is not JSON).
    var value: JSONValue? { JSONValue.parse(body) }
}

extension EventStreamReader.Event {
    /// `data` as a ``JSONValue``.
    var value: JSONValue? { JSONValue.parse(Array(data.utf8)) }
}
