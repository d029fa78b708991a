/// Limits and addresses for an `HTTPServer`. Every field has a production-worthy default.
public struct ServerConfiguration: Sendable {
    /// Address to listen on (IPv4/IPv6 literal or a resolvable name).
    public var host: String = "127.0.0.1"
    /// Port; 0 picks a free one (`HTTPServer.start()` returns it).
    public var port: Int = 8080
    /// Largest accepted request body; larger → 413 problem, at the head for an announced
    /// `Content-Length` (no `100 Continue`, nothing of the body read), the moment a chunked body
    /// passes it; the connection then closes.
    public var maxBodySize: Int = 1 << 20
    /// Largest request head (request line + headers); larger → 431 problem, connection closed.
    public var maxHeaderSize: Int = 16 << 10
    /// Seconds a keep-alive connection may stay idle between requests.
    public var idleTimeout: Double = 30
    /// Seconds a client has to send a complete request once it started one (slow clients).
    /// libevent 2.1 keeps one timer for both; the server uses the smaller of the two.
    public var readTimeout: Double = 15
    /// Connections open at once, counted from accept; beyond it → 503 with `Retry-After` and close.
    /// nil: the open-file limit less a few descriptors for the listener, the store and logs.
    public var maxConnections: Int?
    /// Event streams open at once (`--max-streams`); beyond it a stream gets 200, a jittered
    /// `retry:` and ends. nil: the open-file limit less a reserve of 10%, at least 256 — so a
    /// server full of streams still has descriptors for reads, writes, `/healthz` and
    /// `/metrics`. Never more than the connection limit less `reservedConnections`.
    public var maxStreams: Int?
    /// Connections always kept free of streams (see `maxStreams`), however it is set.
    public var reservedConnections: Int = 64
    /// The base `retry:` (milliseconds) every stream opens with, and a stream refused for
    /// capacity or ended by shutdown gets; each stream's is jittered ±`retryJitter` of it, so the
    /// clients of a restarted or full server do not all come back in the same second.
    public var streamRetryMilliseconds: Int = 3_000
    /// The fraction of `streamRetryMilliseconds` a stream's `retry:` varies by (0.5: ±50%).
    public var retryJitter: Double = 0.5
    /// Bytes of comment sent first on every stream (`--stream-padding`), for proxies that hold
    /// a response's first bytes; 0 = none, at most 8 KiB.
    public var streamPadding: Int = 0
    /// Proxies whose `X-Forwarded-For` / `Forwarded` names the client (`--trusted-proxy`).
    /// Their own connections count only against the total; per-client limits apply to the
    /// client they name.
    public var trustedProxies = TrustedProxies()
    /// `listen(2)` backlog (libevent's own bind uses 128, too small for bursts).
    public var listenBacklog: Int32 = 4096
    /// Seconds between `: keep-alive` comments on every stream; 0 disables.
    public var heartbeatInterval: Double = 15
    /// A stream whose live output queued behind the frame being written, plus the kernel's send
    /// queue (less that frame's part), passes this is cut off; a conflating stream is not, it
    /// replaces queued frames instead. A single frame larger than this never cuts a reader off.
    public var maxUnsentBytesPerStream: Int = 1 << 20
    /// Seconds a stream's paced output (its opening snapshot, a replay page, a `reset` and
    /// snapshot) may wait for the client, plus one second per `catchUpMinimumBytesPerSecond`
    /// of it; a stream that takes longer is closed (it resumes with `Last-Event-ID`). Paced
    /// output waiting is also bounded in bytes: twice the largest batch, at least
    /// `maxUnsentBytesPerStream` (see `CatchUpBound`). 0 disables the deadline.
    public var catchUpDeadline: Double = 30
    /// The slowest reading of paced output the deadline allows for (bytes per second).
    public var catchUpMinimumBytesPerSecond: Int = 64 << 10
    /// Seconds a client has, from the first byte of a request head, to complete that head
    /// (`--header-timeout`), however slowly it trickles.
    public var headerTimeout: Double = 10
    /// Seconds a client has, from the end of a request head, to send the whole body it announced
    /// (`--body-timeout`), however slowly it trickles; then `408` and the connection closes.
    public var bodyTimeout: Double = 30
    /// Bytes of request bodies not yet complete the server holds at once, over all connections:
    /// bytes actually received, never lengths announced (a body that arrives whole is handed on
    /// at once and holds nothing). A head whose body has no room now, or body bytes that do not
    /// fit, get `503` and the connection closes.
    public var maxBufferedBodyBytes: Int = 256 << 20
    /// The part of `maxBufferedBodyBytes` one client (an address, or the client a trusted proxy
    /// names) may hold, so one client cannot deny bodies to everyone else. nil: a sixteenth of
    /// the total, at least one largest body (`maxBodySize`), at most the total.
    public var maxBufferedBodyBytesPerClient: Int?

    /// `maxBufferedBodyBytesPerClient`, or its default.
    var bufferedBodyBytesPerClient: Int {
        maxBufferedBodyBytesPerClient ?? min(maxBufferedBodyBytes, max(maxBodySize, maxBufferedBodyBytes / 16))
    }
    /// Bytes a client may have pipelined ahead of the request being answered; past it the socket
    /// is not read until the connection reads on (a client that stops reading its answers stops
    /// being read). nil: one largest request (`maxBodySize` and a head) and 64 KiB.
    public var maxUnparsedInputBytes: Int?

    /// `maxUnparsedInputBytes`, or its default.
    var unparsedInputLimit: Int {
        maxUnparsedInputBytes ?? (maxBodySize + maxHeaderSize * 2 + (64 << 10))
    }
    /// Open connections one client address may hold at once (counted from accept), and event
    /// streams one client may hold (behind a trusted proxy: the client it names).
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
