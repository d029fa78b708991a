internal import CLibevent
import Foundation

/// A thread with its own libevent base that writes the event streams handed to it.
///
/// The request loop is the only producer: it posts batches of `WorkerCommand`s through the
/// worker's `EventLoop.execute` (a locked FIFO plus an eventfd wake-up), so each stream sees its
/// commands in the loop's order. Everything else — the streams, their sockets, queues and
/// events, the heartbeat — belongs to the worker's thread. `@unchecked Sendable` for that
/// reason: other threads only call `post` and `stopAndJoin`, which go through `loop.execute`;
/// the members that touch the worker's state check it (`loop.checkConfined`).
///
/// Here: its state, its thread, and applying commands. Its clocks: `StreamWorker+Heartbeat`;
/// its thread's priority and CPU: `StreamWorker+Placement`.
final class StreamWorker: @unchecked Sendable {
    /// iovecs per `sendmsg` (well under IOV_MAX).
    static let maxPieces = 192
    /// Nice levels below the request loop (CFS weight 1024 against 110: the loop gets about 90%
    /// of a contended core). With 4 levels, `GET /healthz` p99 during a 10,000-stream fan-out on
    /// 2 cores was 4–5 ms and PUT p99 8 ms; with 10, 3.0–4.1 ms in 4 runs of 5 and PUT p99 3–6 ms.
    static let niceIncrement: Int32 = 10

    let loop: EventLoop
    /// The worker's place in the dispatch's list, and the dispatch (loop thread: it posts the
    /// commands about this worker's streams, which are their own sinks: see StreamSink.swift).
    let index: Int
    weak var dispatch: StreamDispatch?
    let notices: StreamNotices
    /// Deflates the frames of gzip streams on this thread (see `WorkerStream`).
    let deflater = PieceDeflater()
    /// Level 0: pieces in stored blocks (`--stream-padding` on a gzip stream).
    private lazy var storingDeflater = PieceDeflater(level: 0)
    let compression: StreamCompressionCounters
    private let heartbeatInterval: Double
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    /// Every stream's socket, in one epoll set the worker's base watches (worker thread only).
    private(set) var sockets: StreamSocketSet!

    // Worker thread only.
    private(set) var streams: [Int: WorkerStream] = [:]
    /// Streams following each broadcast topic, by stream id (`WorkerCommand.follow`).
    private var followers: [Int: [Int: WorkerStream]] = [:]
    private var dirty: [WorkerStream] = []
    /// Streams with paced output waiting (`CatchUpBound.due` set), the only ones the
    /// once-a-second sweep looks at: walking all of them cost an idle server more CPU than
    /// its heartbeats (15,000 idle streams, `perf`: 16% of the worker's time, against 8% for the
    /// heartbeat's `ioctl`s).
    private(set) var pacing: [Int: WorkerStream] = [:]
    private var heartbeat: TimerHandle?
    /// Once a second: closes streams whose paced output missed its deadline (`CatchUpBound`).
    private var catchUpSweep: TimerHandle?
    /// Scratch for one `sendmsg`: the iovecs and the chunk headers they point at.
    let iov: UnsafeMutablePointer<iovec>
    let chunkHeaders: UnsafeMutablePointer<UInt8>
    /// "\r\n", the trailer of every chunk.
    let crlf: UnsafeMutablePointer<UInt8>

    init(index: Int, notices: StreamNotices, heartbeatInterval: Double,
         compression: StreamCompressionCounters = StreamCompressionCounters()) throws {
        self.compression = compression
        // A worker closes its streams' sockets itself and may get the same descriptor number
        // again for a later stream: no batched epoll changes here.
        loop = try EventLoop(batchesDescriptorChanges: false)
        self.index = index
        self.notices = notices
        self.heartbeatInterval = heartbeatInterval
        iov = .allocate(capacity: Self.maxPieces)
        chunkHeaders = .allocate(capacity: Self.maxPieces * 24 + 2)
        crlf = chunkHeaders + Self.maxPieces * 24
        crlf[0] = 13
        crlf[1] = 10
        sockets = try StreamSocketSet(loop: loop) { [unowned self] id, readable, writable in
            self.streams[id]?.socketReady(readable: readable, writable: writable)
        }
    }

    deinit {
        iov.deallocate()
        chunkHeaders.deallocate()
    }

    /// Starts the thread (its loop runs until `stopAndJoin`); `workers`: how many the server runs.
    func start(name: String, workers: Int) {
        started = true
        let thread = Thread { [self] in
            // The request loop comes first: when the cores are busy, a fan-out on the workers
            // must not make plain requests (or the writes that feed the streams) wait.
            Self.lowerThreadPriority(by: Self.niceIncrement)
            // And off the loop's CPU when there are fewer workers than CPUs: a fan-out's kernel
            // work (the loopback receive path runs in the sender's `sendmsg`, where no nice
            // level applies) stays on the other cores. With a worker per CPU they use them all.
            Self.avoidFirstCPU(workers: workers)
            loop.run()
            finished.signal()
        }
        thread.name = name
        thread.start()
        loop.execute { [self] in
            catchUpSweep = loop.schedule(after: 1, repeating: true) { [unowned self] in closeLateCatchUps() }
            guard heartbeatInterval > 0 else { return }
            heartbeat = loop.schedule(after: heartbeatInterval, repeating: true) { [unowned self] in beat() }
        }
    }

    /// Hands a batch to the worker (any thread; FIFO with every earlier batch).
    func post(_ batch: [WorkerCommand]) {
        loop.execute { [self] in apply(batch) }
    }

    /// Closes every stream still open (without notices: the server is closing) and waits for
    /// the thread to end. Call once, from the loop thread.
    func stopAndJoin() {
        guard started else { return }
        started = false
        loop.execute { [self] in
            heartbeat?.cancel()
            heartbeat = nil
            catchUpSweep?.cancel()
            catchUpSweep = nil
            for stream in Array(streams.values) { stream.close(clean: true, notify: false) }
            loop.stop()
        }
        finished.wait()
    }

    // MARK: Worker thread

    private func apply(_ batch: [WorkerCommand]) {
        loop.checkConfined("StreamWorker.apply")
        for command in batch {
            switch command {
            case let .open(stream, head):
                streams[stream.id] = stream
                stream.enqueueRaw(head)
                if stream.gzip {
                    stream.enqueueGzipHeader()
                    compression.add(opened: 1)
                }
            case let .socket(stream, fd):
                stream.attach(fd: fd)
                markDirty(stream)
            case let .frame(stream, bytes, key, live):
                stream.enqueue(bytes, key: key, live: live)
                markDirty(stream)
            case let .paced(stream, bytes):
                stream.catchUp.announce(batch: bytes)
            case let .marker(stream, marker):
                stream.enqueueMarker(marker)
                markDirty(stream)
            case let .end(stream):
                stream.requestEnd()
                markDirty(stream)
            case let .follow(stream, topics, after):
                follow(stream, topics: topics, after: after)
            case let .broadcast(topic, frame, order, key, shared):
                // The fan-out proper: the loop posted this once per worker, whatever the
                // number of streams; each follower gets the shared frame at most once per order.
                // A gzip follower gets the frame's shared piece, deflated once for all of them.
                guard let following = followers[topic] else { continue }
                var deliveries = 0
                for stream in following.values where order > stream.lastOrder {
                    stream.lastOrder = order
                    if stream.gzip {
                        guard let piece = shared?.piece(deflater, counters: compression) else {
                            stream.close(clean: false)   // zlib failed (out of memory)
                            continue
                        }
                        stream.enqueue(piece: piece, key: key, live: true)
                        deliveries += 1
                    } else {
                        stream.enqueue(frame, key: key, live: true)
                    }
                    markDirty(stream)
                }
                if deliveries > 0 { compression.add(deliveries: deliveries) }
            }
        }
        // One gathered write per stream per batch, however many frames it got.
        for stream in dirty {
            stream.isDirty = false
            if !stream.waitingForWritable { stream.flush() }
            checkBound(stream)
        }
        dirty.removeAll(keepingCapacity: true)
    }

    private func markDirty(_ stream: WorkerStream) {
        guard !stream.isDirty, !stream.closed else { return }
        stream.isDirty = true
        dirty.append(stream)
    }

    /// Cuts off a stream whose client is not keeping up (see `WorkerStream.mustBeCutOff`).
    func checkBound(_ stream: WorkerStream) {
        loop.checkConfined("StreamWorker.checkBound")
        guard stream.mustBeCutOff else { return }
        stream.close(clean: false)
    }

    /// `bytes` deflated for one stream (its retry, snapshot, replay): counted as such. `stored`:
    /// in stored blocks (level 0), as many bytes on the wire as in the frame (padding).
    func deflateForOneStream(_ bytes: [UInt8], stored: Bool = false) -> DeflatedPiece? {
        loop.checkConfined("StreamWorker.deflateForOneStream")
        guard let piece = (stored ? storingDeflater : deflater).piece(bytes) else { return nil }
        compression.add(perStream: 1)
        return piece
    }

    func forget(_ stream: WorkerStream) {
        loop.checkConfined("StreamWorker.forget")
        streams.removeValue(forKey: stream.id)
        pacing.removeValue(forKey: stream.id)
        unfollow(stream)
    }

    /// `stream` has paced output waiting, or no longer has (see `pacing`).
    func setPacing(_ stream: WorkerStream, _ waiting: Bool) {
        loop.checkConfined("StreamWorker.setPacing")
        if waiting { pacing[stream.id] = stream } else { pacing.removeValue(forKey: stream.id) }
    }

    private func follow(_ stream: WorkerStream, topics: [Int], after: UInt64) {
        unfollow(stream)
        guard !stream.closed else { return }
        stream.topics = topics
        stream.lastOrder = after
        for topic in topics { followers[topic, default: [:]][stream.id] = stream }
    }

    private func unfollow(_ stream: WorkerStream) {
        for topic in stream.topics {
            followers[topic]?.removeValue(forKey: stream.id)
            if followers[topic]?.isEmpty == true { followers.removeValue(forKey: topic) }
        }
        stream.topics = []
    }
}
