import Dispatch

/// The bound and the deadline on a stream's paced output — what `EventStream.sendPaced` queues
/// (an opening snapshot, a page of replay, a `reset` and its snapshot) and the stream's own
/// head, `retry:` and heartbeats. Live frames have their own bound (`WorkerStream.overBound`);
/// this one covers what that bound leaves out on purpose, so a large catch-up never cuts off a
/// client that reads it, yet a client that does not read cannot hold it for as long as it likes:
///
/// - bytes: paced output still waiting for the kernel may not pass ``allowance`` — twice the
///   largest paced batch the stream was given, at least the stream's live bound. A reader gets
///   through any one snapshot; a stream that takes nothing while `reset`s and snapshots pile up
///   is closed at the second one (it resumes with `Last-Event-ID`);
/// - time: paced output must reach the kernel within ``deadlineSeconds`` of the moment it was
///   queued (while earlier paced output waited, counted from then), plus one second per
///   ``minimumBytesPerSecond`` of it. A client that reads a snapshot at a trickle, and so never
///   stalls completely, is closed then.
///
/// A value owned by its `WorkerStream` (worker thread only); its constants are the server's
/// (`StreamLimits`, shared by every stream).
struct CatchUpBound {
    let limits: StreamLimits
    var deadlineSeconds: Double { limits.catchUpDeadline }
    var minimumBytesPerSecond: Int { limits.catchUpBytesPerSecond }
    /// The least allowance: the stream's live bound.
    var floor: Int { limits.bound }

    /// Wire bytes of paced entries queued and not yet taken by the kernel.
    private(set) var queued = 0
    /// The largest paced batch announced (`WorkerCommand.paced`), in bytes.
    private var largestBatch = 0
    /// When everything paced now queued must have reached the kernel, in `now`'s nanoseconds;
    /// 0 while nothing waits. (An optional clock instant took 17 bytes and padding of every
    /// stream, idle ones included.)
    private(set) var due: UInt64 = 0

    init(limits: StreamLimits) {
        self.limits = limits
    }

    /// The most paced output that may wait.
    var allowance: Int { max(floor, 2 * largestBatch) }

    var isOverAllowance: Bool { queued > allowance }

    /// Whether paced output waits (it has a deadline).
    var isWaiting: Bool { due != 0 }

    /// The monotonic clock, in nanoseconds (never 0).
    static var now: UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// `seconds` in nanoseconds, at most about 31 years (a configured deadline is a `Double`).
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds > 0 else { return 0 }
        return seconds >= 1e9 ? 1_000_000_000 * 1_000_000_000 : UInt64(seconds * 1e9)
    }

    /// True once paced output waited past its deadline.
    func isLate(at now: UInt64) -> Bool {
        guard due != 0, deadlineSeconds > 0 else { return false }
        return now > due
    }

    /// `sendPaced` is about to queue `bytes` as one batch.
    mutating func announce(batch bytes: Int) { largestBatch = max(largestBatch, bytes) }

    /// A paced entry of `wire` bytes was queued.
    mutating func added(_ wire: Int, at now: UInt64) {
        let start = due != 0 ? due : now &+ Self.nanoseconds(deadlineSeconds)
        due = max(1, start &+ Self.nanoseconds(Double(wire) / Double(minimumBytesPerSecond)))
        queued += wire
    }

    /// A paced entry of `wire` bytes reached the kernel.
    mutating func sent(_ wire: Int) {
        queued -= wire
        if queued <= 0 {
            queued = 0
            due = 0
        }
    }

    /// The stream closed: nothing waits any more.
    mutating func clear() {
        queued = 0
        due = 0
    }
}

/// What every stream of a server shares: the live bound and the catch-up deadline's terms,
/// one object referenced by each stream rather than three numbers copied into each (an idle
/// stream's size is what 15,000 of them cost).
final class StreamLimits: Sendable {
    /// Live output (plus the kernel's send queue) a stream may have waiting (`maxUnsentBytesPerStream`).
    let bound: Int
    /// Seconds paced output may wait for the client, 0 for no deadline (`catchUpDeadline`).
    let catchUpDeadline: Double
    /// One more second of deadline per this many bytes (`catchUpMinimumBytesPerSecond`), at least 1.
    let catchUpBytesPerSecond: Int

    init(bound: Int, catchUpDeadline: Double = 30, catchUpBytesPerSecond: Int = 64 << 10) {
        self.bound = bound
        self.catchUpDeadline = catchUpDeadline
        self.catchUpBytesPerSecond = max(1, catchUpBytesPerSecond)
    }
}
