/// Where an `EventStream`'s bytes go: one small seam with two implementations, a stream worker's
/// socket (`WorkerStreamSink`) and the in-process recorder (`InProcessStream`), so the route's
/// stream is the same type, with no branch for tests in it. Loop-thread confined.
protocol StreamSink: AnyObject {
    /// Whether the stream conflates instead of cutting a slow client off.
    var conflates: Bool { get }
    /// Queues one frame (`live`: it counts against the slow-consumer bound).
    func send(_ frame: [UInt8], key: String?, live: Bool)
    /// Queues paced output; `marker` (if any) is reported back to `stream.markerReached` once
    /// it was written.
    func sendPaced(_ chunks: [[UInt8]], marker: Int?, of stream: EventStream)
    /// Follows `topics` for broadcasts above `order`.
    func follow(_ topics: [Int], after order: UInt64)
    /// Ends the response after what is queued (with a `retry:` first when given); the
    /// stream's `stop()` follows once it closed.
    func end(retryMilliseconds: Int?, of stream: EventStream)
}

/// Where `HTTPServer.broadcast` delivers: the stream workers, and the in-process streams once
/// a route started one in-process.
protocol StreamFanOut: AnyObject {
    func broadcast(_ frame: [UInt8], topic: Int, order: UInt64, conflationKey: String?)
}

/// A stream written by a worker thread is its own sink (`WorkerStream`): the loop posts the
/// commands about it, in order, through the server's dispatch. These members run on the loop
/// thread and read only what never changes (the stream's worker, its `conflates`): the stream's
/// mutable state stays its worker's. (A sink object of its own cost every idle stream 64 bytes.)
/// Once the dispatch is gone (the server stopped) they do nothing.
extension WorkerStream: StreamSink {
    func send(_ frame: [UInt8], key: String?, live: Bool) {
        worker.dispatch?.enqueue(.frame(self, frame, key: key, live: live), to: worker.index)
    }

    func sendPaced(_ chunks: [[UInt8]], marker: Int?, of stream: EventStream) {
        guard let dispatch = worker.dispatch else { return }
        let index = worker.index
        dispatch.enqueue(.paced(self, bytes: chunks.reduce(0) { $0 + $1.count }), to: index)
        for chunk in chunks where !chunk.isEmpty {
            dispatch.enqueue(.frame(self, chunk, key: nil, live: false), to: index)
        }
        if let marker { dispatch.enqueue(.marker(self, marker), to: index) }
    }

    func follow(_ topics: [Int], after order: UInt64) {
        worker.dispatch?.enqueue(.follow(self, topics: topics, after: order), to: worker.index)
    }

    func end(retryMilliseconds: Int?, of stream: EventStream) {
        guard let dispatch = worker.dispatch else { return }
        if let retryMilliseconds {
            dispatch.enqueue(.frame(self, ServerSentEvent.retry(milliseconds: retryMilliseconds), key: nil, live: false),
                             to: worker.index)
        }
        dispatch.enqueue(.end(self), to: worker.index)
    }
}

/// The workers as a fan-out: one command per worker, whatever the number of streams; while gzip
/// streams are open the frame travels with a `SharedPiece`, deflated once for all of them.
final class WorkerFanOut: StreamFanOut {
    private unowned let server: HTTPServer

    init(server: HTTPServer) { self.server = server }

    func broadcast(_ frame: [UInt8], topic: Int, order: UInt64, conflationKey: String?) {
        guard let dispatch = server.dispatch else { return }
        let shared = server.gzipStreamCount > 0 ? SharedPiece(frame) : nil
        dispatch.enqueueAll(.broadcast(topic: topic, frame: frame, order: order, key: conflationKey, shared: shared))
    }
}
