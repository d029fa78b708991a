/// Timing and batching of a ``PostgresStore``; the defaults suit production.
public struct PostgresStoreOptions: Sendable, Hashable {
    /// How long one connection attempt may take before the database counts as unreachable.
    public var connectTimeout: Duration = .seconds(2)
    /// How long one statement (a commit batch, a read) may take before its connection is
    /// dropped and the call throws ``StoreError/unavailable(_:)``.
    public var queryTimeout: Duration = .seconds(10)
    /// The safety-net doorbell (and connection probe) interval of ``PostgresStore/watch(_:)``.
    public var pollInterval: Duration = .seconds(1)
    /// The first and the longest wait between reconnection attempts (doubling in between).
    public var reconnectDelay: ClosedRange<Duration> = .milliseconds(100) ... .seconds(5)
    /// How long ``PostgresStore/open()`` keeps trying to reach the database at start.
    public var startupTimeout: Duration = .seconds(30)
    /// Writes per group-commit transaction at most.
    public var maxBatch: Int = 128
    /// Group-commit transactions in flight at once, each on its own connection (the next one
    /// waits at the database while the previous one commits; `--database-commit-lanes`). One is
    /// faster here: with 64 writers, a second lane waits at the counter row for most of its call,
    /// makes smaller batches and costs more CPU per write (stop 39: 0.77–0.89× one lane's rate
    /// in the same rounds).
    public var commitLanes: Int = 1

    public init() {}
}
