internal import CLibevent
import Foundation

/// Writing a stream's queue (worker thread): as much as the kernel takes, several entries per
/// `sendmsg` (chunk headers and trailers as iovecs of their own), and the chunk framing.
extension WorkerStream {
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
                sent = try SocketCalls.send(fd, worker.iov, count: pieces)
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
        // Everything was taken: the queue's storage goes too, so an idle stream holds none
        // (a busy one allocates it again at its next frame: one allocation per batch).
        if head > 0 { queue = []; head = 0 }
        if ending { close(clean: true) }
    }

    /// Writes a heartbeat (`wire`: its bytes as they go on the wire, chunk framing included)
    /// on a stream with nothing queued, in one `send`: no queue entry, no clock read, no
    /// allocation. Idle streams are what 15,000 of them cost, and the beat is all they do.
    /// What the kernel does not take queues as usual (raw: its framing is in the bytes) and
    /// waits for room, so the stream's bounds and the stall rule see it like any output.
    func sendKeepAlive(_ wire: [UInt8]) {
        worker.loop.checkConfined("WorkerStream.sendKeepAlive")
        guard fd >= 0, !closed, !ending, !waitingForWritable, head == queue.count else { return }
        let fd = self.fd
        var failure: SystemError?
        let sent = wire.withUnsafeBytes { bytes -> Int in
            do throws(SystemError) { return try SocketCalls.send(fd, bytes) } catch { failure = error; return 0 }
        }
        if let failure, !failure.isTransient { return close(clean: false) }
        sentTotal &+= UInt64(sent)
        guard sent < wire.count else { return }
        enqueueRaw(Array(wire[sent...]))
        armWrite()
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
        if queue[head].live { liveQueued -= queue[head].wire } else { pacedSent(queue[head].wire) }
        if let piece = queue[head].piece {
            sentCRC = piece.appended(to: sentCRC)
            sentLength &+= UInt32(truncatingIfNeeded: piece.length)
        }
        queue[head].bytes = []   // release the shared frame now
        head += 1
        written = 0
    }

    private func armWrite() {
        guard !waitingForWritable else { return }
        waitingForWritable = true
        if !watchWritable() { close(clean: false) }   // the kernel is out of memory
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
