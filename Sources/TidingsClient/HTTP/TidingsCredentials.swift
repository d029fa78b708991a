/// How a client proves who it is to a server started with `--api-token`/`--read-token`.
public enum TidingsCredentials: Sendable, Hashable {
    /// No token (a server without access control).
    case none
    /// `Authorization: Bearer <token>` on every request, the event stream included.
    case bearer(String)
    /// `Authorization: Bearer <token>` on every request; each event-stream connection instead
    /// carries a one-use ticket from `POST /stream-tickets` as `?ticket=` (what a browser's
    /// `EventSource`, which cannot send headers, does; the long-lived token stays out of URLs).
    case bearerWithStreamTickets(String)

    var token: String? {
        switch self {
        case .none: nil
        case let .bearer(token), let .bearerWithStreamTickets(token): token
        }
    }
}
