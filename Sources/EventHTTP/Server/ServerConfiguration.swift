/// Limits and addresses for an `HTTPServer`. Every field has a production-worthy default.
public struct ServerConfiguration: Sendable {
    /// Address to listen on (IPv4/IPv6 literal or a resolvable name).
    public var host: String = "127.0.0.1"
    /// Port; 0 picks a free one (`HTTPServer.start()` returns it).
    public var port: Int = 8080
    /// Largest accepted request body; larger → 413 problem (bodies announced or de-chunked
    /// beyond 4× are refused before any handler runs, and the connection closed).
    public var maxBodySize: Int = 1 << 20
    /// Largest request head (request line + headers); larger → 431 problem, connection closed.
    public var maxHeaderSize: Int = 16 << 10
    /// Seconds a keep-alive connection may stay idle between requests.
    public var idleTimeout: Double = 30
    /// Seconds a client has to send a complete request once it started one (slow clients).
    /// libevent 2.1 keeps one timer for both; the server uses the smaller of the two.
    public var readTimeout: Double = 15
    /// Connections open at once, counted from accept; beyond it → 503 with `Retry-After` and close.
    /// Lowered at start to what the open-file limit allows.
    public var maxConnections: Int = 16_384
    /// Event streams open at once; beyond it a stream gets 200, a jittered `retry:` and ends.
    /// Streams never take the last `reservedConnections`, so plain requests (the writes that
    /// feed the streams among them) still get through when streams are full.
    public var maxStreams: Int = 15_000
    /// Connections kept free of streams (see `maxStreams`).
    public var reservedConnections: Int = 256
    /// `retry:` milliseconds range sent to streams refused for capacity.
    public var fullRetryMilliseconds: ClosedRange<Int> = 2_000...5_000
    /// `listen(2)` backlog (libevent's own bind uses 128, too small for bursts).
    public var listenBacklog: Int32 = 4096
    /// Seconds between `: keep-alive` comments on every stream; 0 disables.
    public var heartbeatInterval: Double = 15
    /// A stream whose live output queued behind the frame being written, plus the kernel's send
    /// queue (less that frame's part), passes this is cut off; a conflating stream is not, it
    /// replaces queued frames instead. A single frame larger than this never cuts a reader off.
    public var maxUnsentBytesPerStream: Int = 1 << 20
    /// Seconds a client has, from the first byte of a request head, to complete that head
    /// (`--header-timeout`), however slowly it trickles.
    public var headerTimeout: Double = 10
    /// Open connections one client address may hold at once (counted from accept).
    public var maxConnectionsPerClient: Int = 512
    /// Threads that write event streams once their head is routed (`--stream-workers`);
    /// 0 = one per core but one (at least one). Each has its own event base and runs a few nice levels below the
    /// request loop.
    public var streamWorkers: Int = 0
    /// Seconds `beginShutdown` waits for output to flush before completing anyway.
    public var shutdownGracePeriod: Double = 5

    public init() {}

    /// Convenience: defaults with a host and port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
}
