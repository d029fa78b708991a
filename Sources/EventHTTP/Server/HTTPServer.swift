internal import CLibevent
import HTTPTypes
import Foundation
public import Logging

/// An HTTP/1.1 server on libevent (a listener and a bufferevent per connection), running on
/// one `EventLoop`. Each `Connection` reads its requests with the one strict parser
/// (`FramingMachine`) and writes its answers itself.
///
/// Loop-thread confined: create it, `start()` it, and call everything else on the loop thread
/// (before `run()` counts). Handlers and filters run on the loop thread.
///
/// ```swift
/// let loop = try EventLoop()
/// let server = HTTPServer(loop: loop, configuration: .init(host: "127.0.0.1", port: 0))
/// server.router.get("/healthz") { _, responder in responder.send(.json(["status": "ok"])) }
/// let port = try server.start()
/// loop.run()
/// ```
public final class HTTPServer {
    public let loop: EventLoop
    public let router: Router
    public let configuration: ServerConfiguration
    public var logger: Logger

    // Internal, not private: the lifecycle, request and response files of this type use them.
    /// The listening socket (from `start()` until shutdown begins or `close()`).
    var listener: OpaquePointer?
    /// Open connections, from accept until close or their hand-off to a stream worker.
    var connections: [ObjectIdentifier: Connection] = [:]
    /// Open streams by id; their sockets belong to the stream workers.
    var streams: [Int: EventStream] = [:]
    /// The budget for request bodies being received at once (`maxBufferedBodyBytes`).
    let bodyBudget: BodyBudget
    /// Bytes of request bodies being received now.
    var bufferedBodyBytes: Int { bodyBudget.used }
    /// The per-client refusal log's rate gate (see `admitConnection`).
    var nextRefusalLog: UInt64 = 0
    var refusalsSinceLog = 0
    /// Open streams per client (the peer, or the client a trusted proxy named).
    var streamsByClient: [String: Int] = [:]
    var nextStreamID = 0
    /// The stream workers (from `start()` until `close()`).
    var dispatch: StreamDispatch?
    /// Where the workers' notices arrive on the loop (`EventLoop.post`).
    var noticeReceiver: Int?
    /// Where `broadcast` delivers: the workers (from `start()`), the in-process streams (once
    /// a route started one in-process).
    var fanOuts: [any StreamFanOut] = []
    /// The bounds every stream shares (one object, referenced by each `WorkerStream`).
    let streamLimits: StreamLimits
    /// Open gzip streams (a broadcast makes a shared piece only while there are some).
    var gzipStreamCount = 0
    /// What gzip event streams cost in compressions (for metrics and tests).
    public let streamCompression = StreamCompressionCounters()
    /// Open connections, counted from accept, in total and per client address.
    var limiter = ConnectionLimiter(total: 0, perClient: 0)
    var inFlight = 0
    var shutdownCompletion: (() -> Void)?
    var shutdownPoll: TimerHandle?
    var shutdownDeadline: UInt64 = 0
    var dateCache: (second: Int, text: String) = (-1, "")
    /// Where the response writer lays out each answer (`AnswerText`): loop-confined like the
    /// server, one answer at a time.
    let answerScratch = UnsafeMutablePointer<UInt8>.allocate(capacity: AnswerText.capacity)
    /// The array whole bodies of a few KiB are read into (`wholeBody`).
    var spareBody: [UInt8] = []

    /// The bound port once started (0 before).
    public internal(set) var port = 0
    /// True once `beginShutdown` was called: no new connections, streams refused.
    public internal(set) var isDraining = false
    /// Event streams currently open.
    public var openStreamCount: Int { streams.count }
    /// Connections accepted and still open (whether or not they sent a request yet).
    public var openConnectionCount: Int { limiter.open }

    public init(loop: EventLoop, configuration: ServerConfiguration = ServerConfiguration(),
                router: Router = Router(), logger: Logger = Logger(label: "EventHTTP")) {
        self.loop = loop
        self.configuration = configuration
        self.router = router
        self.logger = logger
        bodyBudget = BodyBudget(limit: configuration.maxBufferedBodyBytes,
                                perClient: configuration.bufferedBodyBytesPerClient)
        streamLimits = StreamLimits(bound: configuration.maxUnsentBytesPerStream,
                                    catchUpDeadline: configuration.catchUpDeadline,
                                    catchUpBytesPerSecond: configuration.catchUpMinimumBytesPerSecond)
        router.owner = self
    }

    deinit {
        close()
        answerScratch.deallocate()
    }

    /// Connections accepted at once (`maxConnections`, bounded by the open-file limit).
    public internal(set) var connectionLimit = 0
    /// Streams open at once (`maxStreams`, leaving `reservedConnections` for plain requests).
    public internal(set) var streamLimit = 0
    /// The descriptor limit in force when the server started (`RLIMIT_NOFILE`'s soft limit).
    public internal(set) var descriptorLimit = 0
    /// Streams refused since start because the server had no room for them (`maxStreams`,
    /// the per-client share, or no descriptor at the hand-off); each got 200, `retry:`, end.
    public internal(set) var streamsShed = 0

    /// The connection and stream limits for `descriptors` open files: every connection is a
    /// descriptor, and some stay for the listener, the store, logs and the stream hand-off;
    /// streams take at most 90% of the descriptors (at least 256), and never the last
    /// `reservedConnections` connections.
    static func limits(_ configuration: ServerConfiguration, descriptors: Int) -> (connections: Int, streams: Int) {
        let connections = min(configuration.maxConnections ?? Int.max, max(64, descriptors - 64))
        let wanted = configuration.maxStreams ?? max(256, descriptors - descriptors / 10)
        let streams = min(wanted, max(1, connections - configuration.reservedConnections))
        return (connections, streams)
    }
}
