import Foundation

/// The worker's clocks (worker thread): the heartbeat (keep-alive comments on idle streams,
/// stalled readers closed) and the once-a-second sweep of paced output past its deadline.
extension StreamWorker {
    private static let keepAlive = ServerSentEvent.comment("keep-alive")

    /// Closes every stream whose paced output (a snapshot, a replay page) has waited past its
    /// deadline: a client reading it at a trickle never stalls completely, so the heartbeat's
    /// stall rule below would keep it open. A conflating stream is kept (it is for slow readers).
    func closeLateCatchUps() {
        loop.checkConfined("StreamWorker.closeLateCatchUps")
        // Once a second over the streams with paced output waiting, not every stream (closing
        // changes the table, so the few late ones are collected first).
        guard !pacing.isEmpty else { return }
        let now = CatchUpBound.now
        let late = pacing.values.filter { !$0.closed && !$0.conflates && $0.catchUp.isLate(at: now) }
        for stream in late { stream.close(clean: false) }
    }

    /// Heartbeats in a row a stream may go with output waiting and its socket taking nothing.
    static let stalledBeatsLimit: UInt8 = 4

    /// The keep-alive as it goes on the wire of an HTTP/1.1 stream: one chunk, framed once.
    private static let keepAliveChunk: [UInt8] =
        Array(String(keepAlive.count, radix: 16).utf8) + [13, 10] + keepAlive + [13, 10]

    /// Closes stalled readers, and sends a comment on every idle stream (a busy one has
    /// traffic already). One walk over the streams: each is looked at once per beat.
    func beat() {
        loop.checkConfined("StreamWorker.beat")
        var stalled: [WorkerStream] = []
        for stream in streams.values where !stream.closed {
            // A conflating stream is kept: it is for clients that read slowly, and holds one
            // frame per key.
            if !stream.conflates, stream.stalledAtBeat() {
                stalled.append(stream)
                continue
            }
            guard stream.isIdle else { continue }
            if stream.gzip {
                // The same piece for every gzip stream (it never changes).
                guard let piece = KeepAlivePiece.piece else { continue }
                stream.enqueue(piece: piece, key: nil, live: false)
                stream.flush()
            } else {
                stream.sendKeepAlive(stream.chunked ? Self.keepAliveChunk : Self.keepAlive)
            }
        }
        // Closed after the walk (closing takes a stream out of the table being walked).
        for stream in stalled { stream.close(clean: false) }
    }
}

extension WorkerStream {
    /// The heartbeat's look at a stream: whether its client stopped reading altogether — it
    /// took nothing off the wire for `StreamWorker.stalledBeatsLimit` heartbeats in a row while
    /// output waits for it, in our queue (a large snapshot, which the live bound does not count)
    /// or in the kernel's (a snapshot small enough, deflated, to fit the socket's buffers: the
    /// queue is then empty, but the client still reads nothing). Such a stream is closed, so it
    /// neither holds that output nor its connection for as long as it likes.
    func stalledAtBeat() -> Bool {
        // One look at the kernel's send queue per stream and beat (an `ioctl` each).
        let unsent = kernelUnsent
        let taken = sentTotal &- UInt64(unsent)
        let waiting = waitingForWritable || unsent > 0
        defer { takenAtLastBeat = taken }
        guard waiting, taken == takenAtLastBeat else {
            stalledBeats = 0
            return false
        }
        stalledBeats += 1
        return stalledBeats >= StreamWorker.stalledBeatsLimit
    }
}
