import Foundation

/// Queueing on a stream (worker thread): frames, markers, the end, and the bound that decides
/// when a slow reader is conflated or cut off.
extension WorkerStream {
    // MARK: Queueing (worker thread)

    func enqueueRaw(_ bytes: [UInt8]) {
        worker.loop.checkConfined("WorkerStream.enqueueRaw")
        guard !closed, !bytes.isEmpty else { return }
        queue.append(Entry(bytes: bytes, framed: false, live: false, key: nil, wire: bytes.count))
        pacedAdded(bytes.count)
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
        if live { liveQueued += wire } else { pacedAdded(wire) }
    }

    /// Paced output of `wire` bytes was queued: it has a deadline, which the worker's sweep checks.
    private func pacedAdded(_ wire: Int) {
        let wasWaiting = catchUp.isWaiting
        catchUp.added(wire, at: CatchUpBound.now)
        if !wasWaiting { worker.setPacing(self, true) }
    }

    /// Paced output of `wire` bytes reached the kernel; once none waits, the sweep skips the stream.
    func pacedSent(_ wire: Int) {
        let wasWaiting = catchUp.isWaiting
        catchUp.sent(wire)
        if wasWaiting, !catchUp.isWaiting { worker.setPacing(self, false) }
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
            var length = UInt64(sentLength)
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
        let kernel = fd < 0 ? 0 : max(0, SocketCalls.unsentBytes(fd) - written)
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
}
