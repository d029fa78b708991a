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
    /// When everything paced now queued must have reached the kernel; nil while nothing waits.
    private(set) var due: ContinuousClock.Instant?

    init(limits: StreamLimits) {
        self.limits = limits
    }

    /// The most paced output that may wait.
    var allowance: Int { max(floor, 2 * largestBatch) }

    var isOverAllowance: Bool { queued > allowance }

    /// True once paced output waited past its deadline.
    func isLate(at now: ContinuousClock.Instant) -> Bool {
        guard let due, deadlineSeconds > 0 else { return false }
        return now > due
    }

    /// `sendPaced` is about to queue `bytes` as one batch.
    mutating func announce(batch bytes: Int) { largestBatch = max(largestBatch, bytes) }

    /// A paced entry of `wire` bytes was queued.
    mutating func added(_ wire: Int, at now: ContinuousClock.Instant) {
        let start = due ?? now + .seconds(deadlineSeconds)
        due = start + .seconds(Double(wire) / Double(minimumBytesPerSecond))
        queued += wire
    }

    /// A paced entry of `wire` bytes reached the kernel.
    mutating func sent(_ wire: Int) {
        queued -= wire
        if queued <= 0 {
            queued = 0
            due = nil
        }
    }

    /// The stream closed: nothing waits any more.
    mutating func clear() {
        queued = 0
        due = nil
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
