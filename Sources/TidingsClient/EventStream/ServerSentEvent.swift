/// One event dispatched by ``ServerSentEventParser``: what an `EventSource` hands to a
/// `message` listener.
public struct ServerSentEvent: Sendable, Hashable {
    /// The `event:` field, or `"message"` when the event named none.
    public var type: String
    /// Every `data:` line of the event joined with `\n`.
    public var data: String
    /// The stream's last event ID when the event was dispatched (it persists across events
    /// until an `id:` field changes it; empty when none was ever set).
    public var lastEventID: String

    public init(type: String = "message", data: String, lastEventID: String = "") {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
    }
}
