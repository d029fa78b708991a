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
        let now = ContinuousClock.now
        // Once a second over every stream: look without copying the table (closing changes it,
        // so the few late ones are collected first).
        let late = streams.values.filter { !$0.closed && !$0.conflates && $0.catchUp.isLate(at: now) }
        for stream in late { stream.close(clean: false) }
    }

    /// Heartbeats in a row a stream may go with output waiting and its socket taking nothing.
    static let stalledBeatsLimit: UInt8 = 4

    /// Closes stalled readers, then a comment on every idle stream (a busy one has traffic already).
    func beat() {
        loop.checkConfined("StreamWorker.beat")
        // A client that stopped reading altogether: it took nothing off the wire for several
        // heartbeats while output waits for it, in our queue (a large snapshot, which the live
        // bound does not count) or in the kernel's (a snapshot small enough, deflated, to fit
        // the socket's buffers: the queue is then empty, but the client still reads nothing).
        // Closed, so it neither holds that output nor its connection for as long as it likes.
        // A conflating stream is kept: it is for clients that read slowly, and holds one frame per key.
        var stalled: [WorkerStream] = []
        for stream in streams.values where !stream.closed && !stream.conflates {
            // One look at the kernel's send queue per stream and beat (an `ioctl` each).
            let unsent = stream.kernelUnsent
            let taken = stream.sentTotal &- UInt64(unsent)
            let waiting = stream.waitingForWritable || unsent > 0
            if waiting && taken == stream.takenAtLastBeat {
                stream.stalledBeats += 1
                if stream.stalledBeats >= Self.stalledBeatsLimit { stalled.append(stream) }
            } else {
                stream.stalledBeats = 0
            }
            stream.takenAtLastBeat = taken
        }
        // Closed after the walk (closing takes a stream out of the table being walked).
        for stream in stalled { stream.close(clean: false) }
        for stream in streams.values where stream.isIdle {
            if stream.gzip {
                // The same piece for every gzip stream (it never changes).
                guard let piece = KeepAlivePiece.piece else { continue }
                stream.enqueue(piece: piece, key: nil, live: false)
            } else {
                stream.enqueue(Self.keepAlive, key: nil, live: false)
            }
            stream.flush()
        }
    }
}
