import Dispatch
import HTTPTypes

/// An event stream a route started while the router ran in-process (`Router.respond(to:)`):
/// what a socket would have carried, recorded instead — the head as the middleware left it, and
/// every byte of the body in order (`retry:`, padding, snapshot, replay and broadcast frames), so
/// a test reads the stream's frames without a server, a worker or a socket.
///
/// It follows the same rules as a worker's stream where they are the route's business: frames in
/// the order sent, a broadcast taken once per order and never at or below the order `follow`
/// named (`HTTPServer.broadcast`), `onClose` once. What only a socket shows is not modelled: no
/// heartbeats, no slow-consumer bound or conflation (frames are recorded as sent), no gzip (the
/// head says what a socket would get; the bytes stay plain).
///
/// Main-thread confined, like the in-process router. `@unchecked Sendable` only so an
/// `InProcessAnswer` can carry it out of the router's continuation; every member checks the
/// confinement (a main-queue precondition).
///
/// ```swift
/// guard case .eventStream(let stream) = await router.respond(to: request) else { return }
/// XCTAssertTrue(String(decoding: stream.body, as: UTF8.self).hasPrefix("retry:"))
/// stream.close()   // the client goes away: the route's `onClose` runs
/// ```
public final class InProcessStream: StreamSink, @unchecked Sendable {
    /// Status and headers as a socket would get them (after the router's and route's middleware).
    public let head: Response
    /// The `retry:` the stream opened with.
    public let retryMilliseconds: Int
    /// Whether the route asked for a conflating stream.
    public let conflates: Bool
    /// Every body byte written so far.
    public private(set) var body: [UInt8] = []
    /// Whether the route ended the stream (`EventStream.end`) or the client closed it.
    public private(set) var isEnded = false
    /// Called on the main thread after each write to `body` and when the stream ends.
    public var onChange: (() -> Void)?

    /// The route's side (its `onClose`); set once it is made.
    weak var stream: EventStream?
    /// Streams kept until what they wait for is reported on a later main-queue turn (a marker,
    /// the close), in the order it was asked for, as a worker would report it.
    private var held: [EventStream] = []
    /// Broadcast topics followed, and the order of the last broadcast frame taken.
    private var topics: Set<Int> = []
    private var lastOrder: UInt64 = 0
    private weak var router: Router?

    init(head: Response, retryMilliseconds: Int, conflates: Bool, router: Router) {
        self.head = head
        self.retryMilliseconds = retryMilliseconds
        self.conflates = conflates
        self.router = router
    }

    /// The client goes away: the stream stops taking frames and the route's `onClose` runs.
    public func close() {
        dispatchPrecondition(condition: .onQueue(.main))
        finish()
        stream?.stop()
    }

    // MARK: From the route's EventStream and the server's broadcast (main thread)

    func append(_ bytes: [UInt8]) {
        dispatchPrecondition(condition: .onQueue(.main))
        guard !isEnded, !bytes.isEmpty else { return }
        body += bytes
        onChange?()
    }

    // MARK: StreamSink (the route's EventStream writes here)

    func send(_ frame: [UInt8], key: String?, live: Bool) { append(frame) }

    func sendPaced(_ chunks: [[UInt8]], marker: Int?, of stream: EventStream) {
        chunks.forEach(append)
        // Reported later, as a worker reports its marker: the caller finishes its turn first.
        if let marker {
            held.append(stream)
            DispatchQueue.main.async { [self] in held.removeFirst().markerReached(marker) }
        }
    }

    func end(retryMilliseconds: Int?, of stream: EventStream) {
        if let retryMilliseconds { append(ServerSentEvent.retry(milliseconds: retryMilliseconds)) }
        finish()
        // Later, as a worker reports the close.
        held.append(stream)
        DispatchQueue.main.async { [self] in held.removeFirst().stop() }
    }

    func follow(_ topics: [Int], after order: UInt64) {
        dispatchPrecondition(condition: .onQueue(.main))
        self.topics = Set(topics)
        lastOrder = order
    }

    /// A broadcast frame: taken when the stream follows `topic` and `order` is above the last.
    func take(_ frame: [UInt8], topic: Int, order: UInt64) {
        guard topics.contains(topic), order > lastOrder else { return }
        lastOrder = order
        append(frame)
    }

    /// No more frames; the router forgets the stream.
    func finish() {
        dispatchPrecondition(condition: .onQueue(.main))
        guard !isEnded else { return }
        isEnded = true
        router?.inProcessStreams.open.removeValue(forKey: ObjectIdentifier(self))
        onChange?()
    }
}

/// The in-process streams still open, as a fan-out for `HTTPServer.broadcast` (registered with
/// the server when a route first starts a stream in-process). Main-thread confined.
final class InProcessStreams: StreamFanOut {
    var open: [ObjectIdentifier: InProcessStream] = [:]
    /// Whether the server broadcasts here already.
    var isRegistered = false

    func broadcast(_ frame: [UInt8], topic: Int, order: UInt64, conflationKey: String?) {
        guard !open.isEmpty else { return }
        for stream in Array(open.values) { stream.take(frame, topic: topic, order: order) }
    }
}
