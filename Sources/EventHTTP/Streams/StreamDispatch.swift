internal import CLibevent
import Foundation

/// The loop thread's side of the stream workers: picks a worker for a new stream and batches
/// the loop's commands per worker. Loop-thread confined.
///
/// A change fanned out to 10,000 streams is 10,000 `send`s in one loop callback; they collect
/// in per-worker outboxes and leave in one post per worker (one lock, one eventfd write) when
/// the loop's current callbacks are done, via an event activated on the loop's own base.
final class StreamDispatch {
    let workers: [StreamWorker]
    private var outboxes: [[WorkerCommand]]
    /// Open streams per worker (new streams go to the least loaded).
    private var load: [Int]
    private var flushEvent: OpaquePointer?
    private var flushPending = false

    init(base: OpaquePointer, count: Int, notices: StreamNotices, heartbeatInterval: Double,
         compression: StreamCompressionCounters = StreamCompressionCounters()) throws {
        workers = try (0..<max(1, count)).map { index in
            try StreamWorker(index: index, notices: notices, heartbeatInterval: heartbeatInterval, compression: compression)
        }
        outboxes = Array(repeating: [], count: workers.count)
        load = Array(repeating: 0, count: workers.count)
        for worker in workers { worker.dispatch = self }
        for (index, worker) in workers.enumerated() { worker.start(name: "tidings-stream-\(index)", workers: workers.count) }
        flushEvent = event_new(base, -1, 0, { _, _, context in
            Unmanaged<StreamDispatch>.fromOpaque(context!).takeUnretainedValue().flush()
        }, Unmanaged.passUnretained(self).toOpaque())
        guard flushEvent != nil else {
            workers.forEach { $0.stopAndJoin() }   // no thread left running for a dispatch never made
            throw EventHTTPError.libevent("event_new")
        }
    }

    deinit {
        if let flushEvent { event_free(flushEvent) }
    }

    /// The worker for a new stream.
    func assign() -> Int {
        var best = 0
        for index in load.indices where load[index] < load[best] { best = index }
        load[best] += 1
        return best
    }

    func release(_ worker: Int) { load[worker] -= 1 }

    func enqueue(_ command: WorkerCommand, to worker: Int) {
        outboxes[worker].append(command)
        if !flushPending, let flushEvent {
            flushPending = true
            event_active(flushEvent, EV_TIMEOUT, 0)
        }
    }

    /// Queues `command` for every worker (a broadcast: its order relative to each worker's
    /// other commands is the loop's).
    func enqueueAll(_ command: WorkerCommand) {
        for worker in outboxes.indices { enqueue(command, to: worker) }
    }

    /// Posts every outbox to its worker.
    func flush() {
        flushPending = false
        for index in outboxes.indices where !outboxes[index].isEmpty {
            let batch = outboxes[index]
            outboxes[index] = []
            outboxes[index].reserveCapacity(min(batch.count, 1 << 14))
            workers[index].post(batch)
        }
    }

    /// Sends what is pending, then stops every worker and waits for its thread.
    func stop() {
        flush()
        if let flushEvent { event_free(flushEvent) }
        flushEvent = nil
        for worker in workers { worker.stopAndJoin() }
    }
}
