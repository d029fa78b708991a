import EventHTTP
import TidingsStore

/// One environment in memory (API.md "Environments"): its state (values, things, journal),
/// its write pipeline, as-of reads, stream hub, and its own instances of every per-environment
/// route handler (``EnvironmentRoutes``). `default` is the one the unprefixed paths address.
///
/// Main-actor bound, like the state it holds.
@MainActor
final class EnvironmentContext {
    let name: String
    /// When it was created (microseconds since 1970).
    let createdAt: Int64
    /// The environment it was copied from, if any.
    let copiedFrom: String?
    /// The revision of its latest change (0: none).
    var revision: UInt64
    let state: TidingsState
    let writes: WritePipeline
    let asOf: AsOfReads
    let streams: StreamHub
    /// This environment's handlers, by ``EnvironmentRoutes/key(_:_:)``.
    var handlers: [String: RouteHandler] = [:]

    init(name: String, createdAt: Int64, copiedFrom: String?, revision: UInt64, state: TidingsState,
         writes: WritePipeline, asOf: AsOfReads, streams: StreamHub) {
        self.name = name
        self.createdAt = createdAt
        self.copiedFrom = copiedFrom
        self.revision = revision
        self.state = state
        self.writes = writes
        self.asOf = asOf
        self.streams = streams
    }
}
