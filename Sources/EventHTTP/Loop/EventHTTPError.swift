/// Failures setting up the HTTP layer (never raised while serving requests).
public enum EventHTTPError: Error, CustomStringConvertible, Equatable {
    /// A libevent call returned failure; the associated value names it.
    case libevent(String)
    /// The listening socket could not be bound (address in use, bad host, ...).
    case bind(host: String, port: Int, reason: String)

    public var description: String {
        switch self {
        case .libevent(let call): return "libevent call failed: \(call)"
        case .bind(let host, let port, let reason): return "cannot listen on \(host):\(port): \(reason)"
        }
    }
}
