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
    private var sentCRC: UInt32 = 0
    private var sentLength: UInt64 = 0

    private var queue: [Entry] = []
    /// Index of the entry being written, and how much of it the kernel already took.
    private var head = 0
    private var written = 0
    /// Wire bytes of live entries from `head` on.
    private var liveQueued = 0
    private var readEvent: OpaquePointer?
    private var writeEvent: OpaquePointer?
    private(set) var waitingForWritable = false
    private var ending = false
    private(set) var closed = false
    /// Bytes the kernel took so far (see `StreamWorker.beat`).
    private(set) var sentTotal: UInt64 = 0
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
    var kernelUnsent: Int { fd < 0 ? 0 : max(0, Int(tidings_socket_unsent_bytes(fd))) }

    /// Bytes the client's side acknowledged so far: what it has taken off the wire.
    var takenByClient: UInt64 { sentTotal &- UInt64(kernelUnsent) }

    // MARK: Setup (worker thread)

    /// Takes the socket (`fd` < 0: there is none; the stream closes) and registers it on the
    /// worker's base: reads are discarded (a client sends nothing on a stream; what it sends
    /// anyway is never kept), EOF or an error closes the stream. `prefix` goes out before
    /// anything queued so far (nothing was written without a socket).
    func attach(fd: Int32, prefix: [UInt8], base: OpaquePointer) {
        worker.loop.checkConfined("WorkerStream.attach")
        guard !closed, self.fd < 0 else {
            if fd >= 0 { Foundation.close(fd) }
            return
        }
        guard fd >= 0 else { return close(clean: false) }
        self.fd = fd
        if !prefix.isEmpty {
            queue.insert(Entry(bytes: prefix, framed: false, live: false, key: nil, wire: prefix.count), at: head)
            catchUp.added(prefix.count, at: .now)
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        readEvent = event_new(base, fd, Int16(EV_READ | EV_PERSIST), { fd, _, context in
            let stream = Unmanaged<WorkerStream>.fromOpaque(context!).takeUnretainedValue()
            if tidings_discard_input(fd) == 0 { stream.close(clean: false) }
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

    // MARK: Queueing (worker thread)

    func enqueueRaw(_ bytes: [UInt8]) {
        worker.loop.checkConfined("WorkerStream.enqueueRaw")
        guard !closed, !bytes.isEmpty else { return }
        queue.append(Entry(bytes: bytes, framed: false, live: false, key: nil, wire: bytes.count))
        catchUp.added(bytes.count, at: .now)
    }

    /// Queues a frame; on a gzip stream it is deflated for this stream first (a broadcast
    /// event's piece is shared instead, `enqueue(piece:)`).
    func enqueue(_ bytes: [UInt8], key: String?, live: Bool) {
        worker.loop.checkConfined("WorkerStream.enqueue")
        guard !closed, !ending, !bytes.isEmpty else { return }
        guard gzip else { return append(bytes, key: key, live: live, piece: nil) }
        // `--stream-padding` exists to put bytes on the wire for proxies that hold the first
        // ones: deflated, its spaces would shrink to a few bytes, so it goes stored.
        let stored = !live && bytes.first == UInt8(ascii: ":") && ServerSentEvent.isPadding(bytes)
        guard let piece = worker.deflateForOneStream(bytes, stored: stored) else { return close(clean: false) }
        append(piece.bytes, key: key, live: live, piece: piece)
    }

    /// Queues a deflated piece (gzip streams).
    func enqueue(piece: DeflatedPiece, key: String?, live: Bool) {
        worker.loop.checkConfined("WorkerStream.enqueuePiece")
        guard !closed, !ending, gzip else { return }
        append(piece.bytes, key: key, live: live, piece: piece)
    }

    /// The gzip member's header: the first bytes of the body (a gzip stream's, after its head).
    func enqueueGzipHeader() {
        worker.loop.checkConfined("WorkerStream.enqueueGzipHeader")
        guard gzip, !closed, !ending else { return }
        append(Gzip.header, key: nil, live: false, piece: nil)
    }

    private func append(_ bytes: [UInt8], key: String?, live: Bool, piece: DeflatedPiece?) {
        let wire = chunked ? bytes.count + Self.chunkHeaderLength(bytes.count) + 2 : bytes.count
        if conflates, live, let key, behindBytes > 0, overBound {
            // Over the bound: the newer event replaces the queued older one for the same key.
            // It goes to the end, so ids stay increasing; the rest keeps its order.
            let first = written > 0 ? head + 1 : head
            if first < queue.count,
               let index = queue[first...].firstIndex(where: { $0.live && $0.key == key && $0.marker < 0 }) {
                liveQueued -= queue[index].wire
                queue.remove(at: index)
            }
        }
        queue.append(Entry(bytes: bytes, framed: chunked, live: live, key: key, wire: wire, piece: piece))
        if live { liveQueued += wire } else { catchUp.added(wire, at: .now) }
    }

    func enqueueMarker(_ marker: Int) {
        worker.loop.checkConfined("WorkerStream.enqueueMarker")
        guard !closed, !ending else { return }
        queue.append(Entry(bytes: [], framed: false, live: false, key: nil, marker: marker, wire: 0))
    }

    func requestEnd() {
        worker.loop.checkConfined("WorkerStream.requestEnd")
        guard !closed, !ending else { return }
        if gzip {
            // The member's end: what was sent plus everything still queued (all of it goes out
            // before the trailer; nothing is queued after it).
            var crc = sentCRC
            var length = sentLength
            for entry in queue[head...] {
                guard let piece = entry.piece else { continue }
                crc = piece.appended(to: crc)
                length += UInt64(piece.length)
            }
            append(Gzip.trailer(crc: crc, length: length), key: nil, live: false, piece: nil)
        }
        if chunked { enqueueRaw(Self.lastChunk) }
        ending = true
    }

    private static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

    // MARK: The bound (worker thread)

    /// Live output queued behind the entry being written (a large frame being written never
    /// counts against its own reader).
    private var behindBytes: Int {
        guard head < queue.count else { return 0 }
        return queue[head].live ? liveQueued - queue[head].wire : liveQueued
    }

    /// Whether what waits behind the current entry, plus the kernel's send queue, passes the
    /// bound. The part of the current entry the kernel already holds is not counted: a large
    /// frame being read at full speed is never held against its reader.
    var overBound: Bool {
        let behind = behindBytes
        guard behind > 0 else { return false }
        if behind > bound { return true }
        let kernel = fd < 0 ? 0 : max(0, Int(tidings_socket_unsent_bytes(fd)) - written)
        return behind + kernel > bound
    }

    /// A conflating stream is never cut off for being slow; its un-keyed frames and its paced
    /// output still have a (generous) cap. Any other stream: live output over the bound, or
    /// paced output over its allowance (`CatchUpBound`).
    var mustBeCutOff: Bool {
        guard !closed else { return false }
        if conflates { return behindBytes > 16 * bound || catchUp.queued > 16 * catchUp.allowance }
        return overBound || catchUp.isOverAllowance
    }

    // MARK: Writing (worker thread)

    /// Writes as much of the queue as the kernel takes, several entries per `sendmsg`.
    func flush() {
        worker.loop.checkConfined("WorkerStream.flush")
        guard fd >= 0 else { return }   // the socket has not arrived yet
        while !closed, head < queue.count {
            if queue[head].marker >= 0 {
                worker.notices.reached(id, marker: queue[head].marker)
                pop()
                continue
            }
            let (pieces, requested) = gather()
            let sent: Int
            do {
                sent = try syscall("sendmsg") { tidings_sendv(fd, worker.iov, Int32(pieces)) }
            } catch {
                if error.isTransient { armWrite(); return }
                close(clean: false)
                return
            }
            consume(sent)
            if head > 64, head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            if sent < requested { armWrite(); return }
        }
        guard !closed else { return }
        if head > 0 { queue.removeAll(keepingCapacity: queue.capacity <= 16); head = 0 }
        if ending { close(clean: true) }
    }

    /// Fills the worker's iovec scratch from `head` on; stops at a marker.
    private func gather() -> (pieces: Int, bytes: Int) {
        var pieces = 0, total = 0
        var index = head
        while index < queue.count, pieces + 3 <= StreamWorker.maxPieces, queue[index].marker < 0 {
            var skip = index == head ? written : 0
            let entry = queue[index]
            let header: UnsafeMutablePointer<UInt8> = worker.chunkHeaders + pieces * 24
            let headerLength = entry.framed ? Self.writeChunkHeader(entry.bytes.count, into: header) : 0
            // The array's storage stays alive and unmodified while its entry is queued, so the
            // pointer stays valid until the `sendmsg` below returns.
            let payload = entry.bytes.withUnsafeBufferPointer { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
            func add(_ base: UnsafeMutableRawPointer, _ length: Int) {
                guard length > 0 else { return }
                if skip >= length { skip -= length; return }
                worker.iov[pieces] = iovec(iov_base: base + skip, iov_len: length - skip)
                total += length - skip
                pieces += 1
                skip = 0
            }
            add(UnsafeMutableRawPointer(header), headerLength)
            add(payload, entry.bytes.count)
            add(UnsafeMutableRawPointer(worker.crlf), entry.framed ? 2 : 0)
            index += 1
        }
        return (pieces, total)
    }

    private func consume(_ sent: Int) {
        sentTotal &+= UInt64(sent)
        var left = sent
        while left > 0, head < queue.count {
            let remaining = queue[head].wire - written
            if left >= remaining {
                left -= remaining
                pop()
            } else {
                written += left
                left = 0
            }
        }
    }

    private func pop() {
        if queue[head].live { liveQueued -= queue[head].wire } else { catchUp.sent(queue[head].wire) }
        if let piece = queue[head].piece {
            sentCRC = piece.appended(to: sentCRC)
            sentLength += UInt64(piece.length)
        }
        queue[head].bytes = []   // release the shared frame now
        head += 1
        written = 0
    }

    private func armWrite() {
        guard !waitingForWritable, let writeEvent else { return }
        waitingForWritable = true
        event_add(writeEvent, nil)
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
                _ = tidings_discard_input(fd)
                shutdown(fd, Int32(SHUT_WR))
            }
            Foundation.close(fd)
        }
        worker.forget(self)
        if notify { worker.notices.closed(id) }
    }

    // MARK: Chunk framing

    static func chunkHeaderLength(_ count: Int) -> Int {
        var digits = 1, rest = count >> 4
        while rest > 0 { digits += 1; rest >>= 4 }
        return digits + 2
    }

    /// `<hex length>\r\n` into `out` (at most 18 bytes); returns its length.
    static func writeChunkHeader(_ count: Int, into out: UnsafeMutablePointer<UInt8>) -> Int {
        let length = chunkHeaderLength(count)
        var value = count
        var position = length - 3
        while position >= 0 {
            let digit = UInt8(value & 15)
            out[position] = digit < 10 ? 48 + digit : 87 + digit
            value >>= 4
            position -= 1
        }
        out[length - 2] = 13
        out[length - 1] = 10
        return length
    }
}
