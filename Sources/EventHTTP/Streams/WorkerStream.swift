internal import CLibevent
import Foundation

/// One event stream's socket and output queue, owned by a `StreamWorker`.
///
/// `@unchecked Sendable` because the loop thread creates it and then only carries the reference
/// inside `WorkerCommand`s; every mutable member is touched on its worker's thread alone
/// (checked: `worker.loop.checkConfined` in each member that does). It is also its
/// `EventStream`'s sink (its extension in StreamSink.swift): those members run on the loop
/// thread and read only its constants and its worker's dispatch.
///
/// Frames are the loop's shared `[UInt8]` arrays (reference-counted, never copied per stream).
/// Chunked framing (HTTP/1.1) is added at write time as separate iovecs, and everything queued
/// leaves in one `sendmsg` of up to `StreamWorker.maxPieces` pieces.
///
/// A gzip stream (`gzip`) sends one gzip member: the 10-byte header first, then every frame as
/// a `DeflatedPiece` (a broadcast event's shared one, or one deflated here for this stream
/// alone), each flushed on its own so the client decodes it as it arrives; it keeps only the
/// CRC-32 and length of what it sent, and ends a clean end with the final block and trailer.
///
/// Here: its state, attaching the socket, closing. Queueing and the bound: `WorkerStream+Queue`;
/// writing: `WorkerStream+Writing`.
final class WorkerStream: @unchecked Sendable {
    struct Entry {
        var bytes: [UInt8]
        /// Wrapped in a chunk (HTTP/1.1 frames) rather than written as is (head, terminator).
        var framed: Bool
        var live: Bool
        var key: String?
        /// ≥ 0: a completion marker (no bytes).
        var marker: Int = -1
        /// Bytes on the wire, chunk header and trailer included.
        var wire: Int
        /// On a gzip stream: the piece these bytes are (its CRC and length count once sent).
        var piece: DeflatedPiece? = nil
    }

    // Stored properties in an order that leaves next to no padding: an idle stream is mostly
    // this object, and 15,000 of them are what issue 33 measures.
    let id: Int
    unowned let worker: StreamWorker

    // Internal rather than private only so that the `+Queue` and `+Writing` files reach them.
    var queue: [Entry] = []
    /// Index of the entry being written, and how much of it the kernel already took.
    var head = 0
    var written = 0
    /// Wire bytes of live entries from `head` on.
    var liveQueued = 0
    /// Bytes the kernel took so far (see `StreamWorker.beat`).
    var sentTotal: UInt64 = 0
    /// What the heartbeat last saw the client take (`takenByClient`).
    var takenAtLastBeat: UInt64 = 0
    /// Broadcast topics followed, and the order of the last broadcast frame taken (frames at or
    /// below it are skipped, so one reaching the stream through two topics goes out once).
    var topics: [Int] = []
    var lastOrder: UInt64 = 0
    /// Length of the uncompressed bytes of the pieces sent so far (gzip), modulo 2^32 as the
    /// gzip trailer keeps it (4 bytes beside `fd` and `sentCRC`, rather than 8 and padding).
    var sentLength: UInt32 = 0
    /// The socket, once it arrived (`attach`); -1 before. Until then frames only queue.
    private(set) var fd: Int32 = -1
    /// CRC-32 of the uncompressed bytes of the pieces sent so far (gzip).
    var sentCRC: UInt32 = 0
    let chunked: Bool
    let conflates: Bool
    /// Whether the response is gzip (`Content-Encoding: gzip` in its head).
    let gzip: Bool
    var waitingForWritable = false
    var ending = false
    private(set) var closed = false
    var isDirty = false
    /// Whether the socket is in the worker's socket set, and whether it asked for room to write.
    private var watched = false
    private var watchingWritable = false
    /// Heartbeats in a row with output waiting and nothing taken by the kernel.
    var stalledBeats: UInt8 = 0

    /// The bound and deadline on paced output (what `liveQueued` leaves out).
    var catchUp: CatchUpBound
    /// The live bound (the server's, shared: `StreamLimits`).
    var bound: Int { catchUp.limits.bound }

    init(id: Int, chunked: Bool, conflates: Bool, limits: StreamLimits, gzip: Bool = false, worker: StreamWorker) {
        self.id = id
        self.chunked = chunked
        self.conflates = conflates
        catchUp = CatchUpBound(limits: limits)
        self.gzip = gzip
        self.worker = worker
    }

    var isIdle: Bool { head == queue.count && !ending && !closed }

    /// Bytes still in the kernel's send queue (sent or not, not yet acknowledged by the client).
    var kernelUnsent: Int { fd < 0 ? 0 : SocketCalls.unsentBytes(fd) }

    /// Bytes the client's side acknowledged so far: what it has taken off the wire.
    var takenByClient: UInt64 { sentTotal &- UInt64(kernelUnsent) }

    // MARK: Setup (worker thread)

    /// Takes the socket (`fd` < 0: there is none; the stream closes) and registers it in the
    /// worker's socket set: reads are discarded (a client sends nothing on a stream; what it
    /// sends anyway is never kept), EOF or an error closes the stream.
    func attach(fd: Int32) {
        worker.loop.checkConfined("WorkerStream.attach")
        guard !closed, self.fd < 0 else {
            if fd >= 0 { Foundation.close(fd) }
            return
        }
        guard fd >= 0 else { return close(clean: false) }
        self.fd = fd
        guard worker.sockets.add(fd, id: id) else {
            close(clean: false)   // out of memory: nothing to watch the client with
            return
        }
        watched = true
    }

    /// The worker's socket set reports this stream's socket: input, its end or an error
    /// (`readable`), room to write after a refused write (`writable`).
    func socketReady(readable: Bool, writable: Bool) {
        worker.loop.checkConfined("WorkerStream.socketReady")
        guard !closed, fd >= 0 else { return }
        if readable, !SocketCalls.discardInput(fd) { return close(clean: false) }
        guard writable, waitingForWritable else { return }
        waitingForWritable = false
        flush()   // may wait for room again (`armWrite`)
        guard !closed else { return }
        if !waitingForWritable, watchingWritable {
            watchingWritable = false
            if !worker.sockets.watch(fd, id: id, writable: false) { return close(clean: false) }
        }
        worker.checkBound(self)
    }

    /// Asks the socket set for room to write (the kernel refused bytes); false when it cannot.
    func watchWritable() -> Bool {
        guard !watchingWritable else { return true }
        watchingWritable = true
        return worker.sockets.watch(fd, id: id, writable: true)
    }

    /// Stops the stream: frees its events, closes the socket (after a clean end, the peer gets
    /// everything written first), and tells the loop.
    func close(clean: Bool, notify: Bool = true) {
        worker.loop.checkConfined("WorkerStream.close")
        guard !closed else { return }
        closed = true
        if watched { worker.sockets.remove(fd) }
        watched = false
        queue = []
        head = 0
        liveQueued = 0
        catchUp.clear()
        if fd >= 0 {
            if clean {
                // Unread input would turn close() into a reset that can destroy unsent output.
                _ = SocketCalls.discardInput(fd)   // whether the peer is gone: the close is the same
                syscall("shutdown", tolerating: "the close below ends the stream anyway") { shutdown(fd, Int32(SHUT_WR)) }
            }
            Foundation.close(fd)
        }
        worker.forget(self)
        if notify { worker.notices.closed(id) }
    }
}
