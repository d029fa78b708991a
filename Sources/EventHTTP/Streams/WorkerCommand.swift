/// What the loop thread asks of a stream worker. Carried in FIFO batches (`StreamDispatch`), so
/// a stream's commands reach its worker in the order the loop issued them.
enum WorkerCommand: Sendable {
    /// Take over this stream: write `head` (status line, headers, `retry:`) first, once its
    /// socket arrives (what is queued until then waits).
    case open(WorkerStream, head: [UInt8])
    /// The stream's socket, once its connection's earlier answers were written and a loop turn
    /// later (see `HTTPServer.detach`); a negative descriptor: there is none (the client left
    /// first, or the server is closing), close.
    case socket(WorkerStream, fd: Int32)
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

/// What a worker tells the loop thread, posted to the server's receiver on the loop
/// (`EventLoop.post`: a locked FIFO and an eventfd wake-up). The workers never hold the server.
struct StreamNotices: Sendable {
    enum Notice: Sendable {
        /// The worker closed stream `id` (client gone, cut off, or ended).
        case closed(Int)
        /// Everything queued on stream `id` before `marker` was handed to the kernel.
        case reached(Int, marker: Int)
    }

    let loop: EventLoop
    /// The server's receiver (`EventLoop.addReceiver`).
    let receiver: Int

    func closed(_ id: Int) { loop.post(Notice.closed(id), to: receiver) }

    func reached(_ id: Int, marker: Int) { loop.post(Notice.reached(id, marker: marker), to: receiver) }
}
