internal import CLibevent
import Foundation

/// One event stream's socket and output queue, owned by a `StreamWorker`.
///
/// `@unchecked Sendable` because the loop thread creates it and then only carries the reference
/// inside `WorkerCommand`s; every mutable member is touched on its worker's thread alone
/// (checked: `worker.loop.checkConfined` in each member that does).
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

    let id: Int
    /// The socket, once it arrived (`attach`); -1 before. Until then frames only queue.
    private(set) var fd: Int32 = -1
    let chunked: Bool
    let conflates: Bool
    let bound: Int
    /// Whether the response is gzip (`Content-Encoding: gzip` in its head).
    let gzip: Bool
    unowned let worker: StreamWorker
    /// CRC-32 and length of the uncompressed bytes of the pieces sent so far (gzip).
    var sentCRC: UInt32 = 0
    var sentLength: UInt64 = 0

    // Internal rather than private only so that the `+Queue` and `+Writing` files reach them.
    var queue: [Entry] = []
    /// Index of the entry being written, and how much of it the kernel already took.
    var head = 0
    var written = 0
    /// Wire bytes of live entries from `head` on.
    var liveQueued = 0
    private var readEvent: OpaquePointer?
    var writeEvent: OpaquePointer?
    var waitingForWritable = false
    var ending = false
    private(set) var closed = false
    /// Bytes the kernel took so far (see `StreamWorker.beat`).
    var sentTotal: UInt64 = 0
    /// What the heartbeat last saw the client take (`takenByClient`).
    var takenAtLastBeat: UInt64 = 0
    /// Heartbeats in a row with output waiting and nothing taken by the kernel.
    var stalledBeats = 0
    var isDirty = false
    /// Broadcast topics followed, and the order of the last broadcast frame taken (frames at or
    /// below it are skipped, so one reaching the stream through two topics goes out once).
    var topics: [Int] = []
    var lastOrder: UInt64 = 0

    /// The bound and deadline on paced output (what `liveQueued` leaves out).
    var catchUp: CatchUpBound

    init(id: Int, chunked: Bool, conflates: Bool, bound: Int, gzip: Bool = false,
         catchUpDeadline: Double = 30, catchUpBytesPerSecond: Int = 64 << 10, worker: StreamWorker) {
        self.id = id
        self.chunked = chunked
        self.conflates = conflates
        self.bound = bound
        catchUp = CatchUpBound(deadlineSeconds: catchUpDeadline, minimumBytesPerSecond: catchUpBytesPerSecond, floor: bound)
        self.gzip = gzip
        self.worker = worker
    }

    var isIdle: Bool { head == queue.count && !ending && !closed }

    /// Bytes still in the kernel's send queue (sent or not, not yet acknowledged by the client).
    var kernelUnsent: Int { fd < 0 ? 0 : SocketCalls.unsentBytes(fd) }

    /// Bytes the client's side acknowledged so far: what it has taken off the wire.
    var takenByClient: UInt64 { sentTotal &- UInt64(kernelUnsent) }

    // MARK: Setup (worker thread)

    /// Takes the socket (`fd` < 0: there is none; the stream closes) and registers it on the
    /// worker's base: reads are discarded (a client sends nothing on a stream; what it sends
    /// anyway is never kept), EOF or an error closes the stream.
    func attach(fd: Int32, base: OpaquePointer) {
        worker.loop.checkConfined("WorkerStream.attach")
        guard !closed, self.fd < 0 else {
            if fd >= 0 { Foundation.close(fd) }
            return
        }
        guard fd >= 0 else { return close(clean: false) }
        self.fd = fd
        let context = Unmanaged.passUnretained(self).toOpaque()
        readEvent = event_new(base, fd, Int16(EV_READ | EV_PERSIST), { fd, _, context in
            let stream = Unmanaged<WorkerStream>.fromOpaque(context!).takeUnretainedValue()
            if !SocketCalls.discardInput(fd) { stream.close(clean: false) }
        }, context)
        writeEvent = event_new(base, fd, Int16(EV_WRITE), { _, _, context in
            let stream = Unmanaged<WorkerStream>.fromOpaque(context!).takeUnretainedValue()
            stream.waitingForWritable = false
            stream.flush()
            stream.worker.checkBound(stream)
        }, context)
        guard readEvent != nil, writeEvent != nil else {
            close(clean: false)   // out of memory: nothing to write with
            return
        }
        event_add(readEvent, nil)
    }

    /// Stops the stream: frees its events, closes the socket (after a clean end, the peer gets
    /// everything written first), and tells the loop.
    func close(clean: Bool, notify: Bool = true) {
        worker.loop.checkConfined("WorkerStream.close")
        guard !closed else { return }
        closed = true
        if let readEvent { event_free(readEvent) }
        if let writeEvent { event_free(writeEvent) }
        readEvent = nil
        writeEvent = nil
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
