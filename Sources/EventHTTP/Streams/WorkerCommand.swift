/// What the loop thread asks of a stream worker. Carried in FIFO batches (`StreamDispatch`), so
/// a stream's commands reach its worker in the order the loop issued them.
enum WorkerCommand: Sendable {
    /// Take over this stream: write `head` (status line, headers, `retry:`) first, once its
    /// socket arrives (what is queued until then waits).
    case open(WorkerStream, head: [UInt8])
    /// The stream's socket, a loop turn after `open` (see `HTTPServer.handOffStream`), with
    /// bytes evhttp had still to write to it; a negative descriptor: there is none, close.
    case socket(WorkerStream, fd: Int32, prefix: [UInt8])
    /// Queue one frame. `live` frames count against the slow-consumer bound; catch-up
    /// (paced) frames do not. `key` is the conflation key on a conflating stream.
    case frame(WorkerStream, [UInt8], key: String?, live: Bool)
    /// The next paced frames (`EventStream.sendPaced`) are one batch of `bytes` (see `CatchUpBound`).
    case paced(WorkerStream, bytes: Int)
    /// Report `marker` back to the loop once everything queued before it reached the kernel.
    case marker(WorkerStream, Int)
    /// End the response after everything queued, then close the socket.
    case end(WorkerStream)
    /// From now on the stream follows `topics` (replacing earlier ones) and takes broadcast
    /// frames whose order is above `after` (see `HTTPServer.broadcast`).
    case follow(WorkerStream, topics: [Int], after: UInt64)
    /// One frame for every follower of `topic` whose last order is below `order`; `key` is the
    /// conflation key for conflating followers. `shared`, when gzip streams are open: the
    /// frame's piece, deflated once by the first worker that needs it.
    case broadcast(topic: Int, frame: [UInt8], order: UInt64, key: String?, shared: SharedPiece?)
}

/// What a worker tells the loop thread. Posted through the loop's `execute` (a locked FIFO and
/// an eventfd wake-up), handled on the loop thread only.
///
/// `@unchecked Sendable` (a weak reference is a `var` to the compiler): `server` is set once in
/// init and only dereferenced inside closures that run on `loop`'s thread (a precondition in
/// each); workers only call the posting methods.
final class StreamNotices: @unchecked Sendable {
    private let loop: EventLoop
    private weak let server: HTTPServer?

    init(loop: EventLoop, server: HTTPServer) {
        self.loop = loop
        self.server = server
    }

    /// The worker closed stream `id` (client gone, cut off, or ended).
    func closed(_ id: Int) {
        loop.execute { [self] in
            precondition(loop.isOnLoopThread)
            server?.workerClosedStream(id)
        }
    }

    /// Everything queued on stream `id` before `marker` was handed to the kernel.
    func reached(_ id: Int, marker: Int) {
        loop.execute { [self] in
            precondition(loop.isOnLoopThread)
            server?.workerReachedMarker(id, marker: marker)
        }
    }
}
