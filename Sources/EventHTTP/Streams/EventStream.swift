import Dispatch
import HTTPTypes

/// An open Server-Sent-Events response. Obtain one from `Responder.startEventStream()`.
///
/// Loop-thread confined: call every member on the loop thread (the main actor when the loop
/// runs on the main thread). Not `Sendable`: it never leaves the loop's thread (what workers and
/// the in-process recorder report back reaches it there); the members check the confinement
/// (`EventLoop.checkConfined`).
///
/// The stream's socket belongs to a stream worker (a thread with its own event base): this
/// object only forwards pre-encoded frames to it, in order, through its `StreamSink` (in-process,
/// the recorder is the sink). Frames are shared, never copied per
/// stream (`ServerSentEvent.encoded` once, `send` to any number of streams). A stream whose
/// live output queued behind the frame being written, plus the kernel's send queue, passes
/// `maxUnsentBytesPerStream` is cut off — unless it conflates (`startEventStream(conflate:)`):
/// then, while over the bound, a newer frame with the same conflation key replaces the queued
/// older one. `onClose` fires exactly once however the stream stops (client gone, cut off,
/// `end()`, server shutdown).
///
/// ```swift
/// guard let stream = responder.startEventStream() else { return }
/// let cancellable = subject.sink { stream.send($0.frame) }
/// stream.onClose = { cancellable.cancel() }
/// ```
public final class EventStream {
    static let headHeaders: HTTPFields = [
        .contentType: "text/event-stream",
        // no-transform: a proxy must not recompress or rebuffer the stream.
        .cacheControl: "no-cache, no-transform",
        .xAccelBuffering: "no",
    ]

    // The flags last, together: no padding between stored properties (one per open stream).
    let id: Int
    /// Where the bytes go: a worker's socket, or the in-process recorder.
    let sink: any StreamSink
    private weak var server: HTTPServer?
    /// On a conflating stream: the key of a frame sent without one (nil: not conflated). Boxed:
    /// a reference is half an optional closure's size, and most streams have none.
    private let keyOf: ConflationKeying?
    /// Completions of paced output by marker; a new marker is one above the highest waiting.
    private var completions: [Int: () -> Void] = [:]
    /// The client's address while the stream holds its connection slot (see `ConnectionLimiter`).
    var clientAddress: String?
    /// The client the stream counts against (`HTTPServer.streamsByClient`): the peer, or the
    /// client a trusted proxy named.
    var client: String?

    /// Called once when the stream stops for any reason. Set it right after starting.
    public var onClose: (() -> Void)?
    /// Called once with the stream when it stops, after `onClose`. One closure can serve every
    /// stream (the stream hub's), where an `onClose` that must tell streams apart is a closure,
    /// and an allocation, per stream: 48 bytes of every idle stream.
    public var onStop: ((EventStream) -> Void)?
    /// The worker writing the stream (`workerIndex`), in 4 bytes beside the flags.
    private let worker: Int32
    /// Whether frames can still be written.
    public private(set) var isOpen = true
    private var endRequested = false
    var holdsConnectionSlot = false
    /// Whether the response is gzip (its worker deflates what it sends).
    var isGzip = false
    /// The server the stream belongs to, for `HTTPServer.broadcast` (nil once it is gone).
    public var owner: HTTPServer? { server }
    /// Whether the stream conflates instead of cutting a slow client off.
    public var conflates: Bool { sink.conflates }
    var workerIndex: Int { Int(worker) }

    /// `id` and `workerIndex`: the server's book-keeping (-1 for a stream no worker writes).
    init(id: Int, workerIndex: Int, sink: any StreamSink, server: HTTPServer?, keyOf: (([UInt8]) -> String?)?) {
        self.id = id
        worker = Int32(workerIndex)
        self.sink = sink
        self.server = server
        self.keyOf = keyOf.map(ConflationKeying.init)
    }

    /// Sends one pre-encoded frame. Returns false when the stream is closed or ending. A slow
    /// client is cut off by its worker a moment later (`onClose` then fires).
    @discardableResult
    public func send(_ frame: [UInt8]) -> Bool {
        let key = conflates ? keyOf?.key(frame) : nil
        return forward(frame, key: key, live: true)
    }

    /// Sends one frame with a conflation key: on a conflating stream that is over its bound, it
    /// replaces the queued older frame with the same key. On other streams, like `send(_:)`.
    @discardableResult
    public func send(_ frame: [UInt8], conflationKey: String) -> Bool {
        forward(frame, key: conflates ? conflationKey : nil, live: true)
    }

    /// Sends a comment line (`: text`).
    @discardableResult
    public func sendComment(_ text: String) -> Bool { send(ServerSentEvent.comment(text)) }

    /// Writes `chunks` as the client drains them: they never count against the unsent bound,
    /// so a large snapshot or replay never trips it by itself; `send`s made meanwhile follow,
    /// in order. They have a bound and a deadline of their own (`CatchUpBound`): a client that
    /// lets paced output pile up past twice the largest batch, or takes longer than the
    /// configured `catchUpDeadline` (plus a second per `catchUpMinimumBytesPerSecond`), is closed. `completion` runs (on the loop thread) once the last chunk was handed to the
    /// kernel; not at all if the stream closes first.
    public func sendPaced(_ chunks: [[UInt8]], completion: (() -> Void)? = nil) {
        server?.loop.checkConfined("EventStream.sendPaced")
        guard isOpen, !endRequested else { return }
        var marker: Int?
        if let completion {
            // Unique among the markers still on their way (a reached one is removed first).
            let next = (completions.keys.max() ?? 0) + 1
            completions[next] = completion
            marker = next
        }
        sink.sendPaced(chunks, marker: marker, of: self)
    }

    /// Makes the stream follow `topics`, replacing any it followed: every frame later passed to
    /// `HTTPServer.broadcast` for one of them is queued on it as a live frame (in the loop's
    /// order, after everything sent before this call), unless its order is not above the last
    /// one this stream took, starting from `order`. So a frame reaching a stream through two
    /// topics goes out once, and nothing at or before `order` (a snapshot's revision) repeats.
    public func follow(_ topics: [Int], after order: UInt64) {
        guard isOpen, !endRequested else { return }
        sink.follow(topics, after: order)
    }

    /// Ends the response cleanly (after anything queued); `onClose` fires once the worker
    /// has closed the connection.
    public func end() {
        end(retryMilliseconds: nil)
    }

    /// Ends the response cleanly, telling the client first to wait `retryMilliseconds` before
    /// it reconnects (a `retry:` line; nil sends none).
    public func end(retryMilliseconds: Int?) {
        server?.loop.checkConfined("EventStream.end")
        guard isOpen, !endRequested else { return }
        endRequested = true
        sink.end(retryMilliseconds: retryMilliseconds, of: self)
    }

    private func forward(_ frame: [UInt8], key: String?, live: Bool) -> Bool {
        server?.loop.checkConfined("EventStream.send")
        guard isOpen, !endRequested else { return false }
        sink.send(frame, key: key, live: live)
        return true
    }

    // MARK: From the worker (loop thread)

    func markerReached(_ marker: Int) {
        server?.loop.checkConfined("EventStream.markerReached")
        guard isOpen, let completion = completions.removeValue(forKey: marker) else { return }
        completion()
    }

    /// Marks the stream closed once and tells the owner.
    func stop() {
        server?.loop.checkConfined("EventStream.stop")
        guard isOpen else { return }
        isOpen = false
        completions.removeAll()
        let onClose = self.onClose
        let onStop = self.onStop
        self.onClose = nil
        self.onStop = nil
        onClose?()
        onStop?(self)
    }
}

/// A conflating stream's key function, boxed (see `EventStream.keyOf`).
final class ConflationKeying {
    let key: ([UInt8]) -> String?
    init(_ key: @escaping ([UInt8]) -> String?) { self.key = key }
}
