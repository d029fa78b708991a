/// Where a client's event stream stands (``TidingsClient/connectionState``).
public enum ConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// Not started yet.
    case idle
    /// Opening a connection (`attempt` counts consecutive attempts, from 1).
    case connecting(attempt: Int)
    /// The server answered and events flow.
    case open
    /// The connection ended (`reason`); the next attempt starts after `delay`.
    case waiting(attempt: Int, delay: Duration, reason: String)
    /// Given up: the server refused the stream in a way retrying cannot change (401, 404, 422).
    case failed(TidingsClientError)
    /// ``TidingsClient/disconnect()`` was called.
    case stopped

    public var description: String {
        switch self {
        case .idle: "idle"
        case let .connecting(attempt): "connecting (attempt \(attempt))"
        case .open: "open"
        case let .waiting(attempt, delay, reason): "waiting \(delay) before attempt \(attempt + 1): \(reason)"
        case let .failed(error): "failed: \(error)"
        case .stopped: "stopped"
        }
    }
}
