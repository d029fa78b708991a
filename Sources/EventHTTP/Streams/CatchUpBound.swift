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
/// A value owned by its `WorkerStream` (worker thread only).
struct CatchUpBound {
    let deadlineSeconds: Double
    let minimumBytesPerSecond: Int
    /// The least allowance: the stream's live bound.
    let floor: Int

    /// Wire bytes of paced entries queued and not yet taken by the kernel.
    private(set) var queued = 0
    /// The largest paced batch announced (`WorkerCommand.paced`), in bytes.
    private var largestBatch = 0
    /// When everything paced now queued must have reached the kernel; nil while nothing waits.
    private(set) var due: ContinuousClock.Instant?

    init(deadlineSeconds: Double, minimumBytesPerSecond: Int, floor: Int) {
        self.deadlineSeconds = deadlineSeconds
        self.minimumBytesPerSecond = max(1, minimumBytesPerSecond)
        self.floor = floor
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
