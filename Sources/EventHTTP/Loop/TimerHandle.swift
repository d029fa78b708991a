internal import CLibevent
import Foundation

/// A scheduled timer. Loop-thread confined: `cancel()` on the loop thread.
///
/// A timer keeps itself alive until it has fired (one-shot) or is cancelled, so a one-shot
/// timer may be fire-and-forget; keep the handle of a repeating timer to stop it.
public final class TimerHandle {
    private var event: OpaquePointer?
    private let body: () -> Void
    private let repeating: Bool
    /// The loop's thread, which alone may cancel or query the timer.
    private let confinement: ThreadConfinement
    /// The retain the C callback context holds while the timer is scheduled.
    private var keepAlive: Unmanaged<TimerHandle>?

    init(loop: EventLoop, delay: Double, repeating: Bool, body: @escaping () -> Void) {
        self.body = body
        self.repeating = repeating
        confinement = loop.confinement
        let flags = repeating ? Int16(EV_PERSIST) : 0
        let retained = Unmanaged.passRetained(self)
        keepAlive = retained
        event = event_new(loop.base, -1, flags, { _, _, context in
            Unmanaged<TimerHandle>.fromOpaque(context!).takeUnretainedValue().fire()
        }, retained.toOpaque())
        guard let event else {
            // Out of memory: a timer that never fires (isScheduled says so), not a leak.
            keepAlive = nil
            retained.release()
            return
        }
        var interval = timeval(seconds: delay)
        event_add(event, &interval)
    }

    private func fire() {
        if repeating {
            body()
        } else {
            // Release the C context's retain only after the body ran.
            let retained = keepAlive
            keepAlive = nil
            body()
            retained?.release()
        }
    }

    /// Whether the timer will still fire.
    public var isScheduled: Bool {
        confinement.check("TimerHandle.isScheduled")
        guard let event, keepAlive != nil else { return false }
        return event_pending(event, Int16(EV_TIMEOUT), nil) != 0
    }

    /// Stops the timer; idempotent.
    public func cancel() {
        confinement.check("TimerHandle.cancel")
        if let event {
            event_del(event)
            event_free(event)
            self.event = nil
        }
        let retained = keepAlive
        keepAlive = nil
        retained?.release()
    }

    deinit {
        if let event { event_free(event) }
    }
}

extension timeval {
    init(seconds: Double) {
        let whole = max(0, seconds.rounded(.down))
        self.init(tv_sec: Int(whole), tv_usec: Int((max(0, seconds) - whole) * 1_000_000))
    }
}
