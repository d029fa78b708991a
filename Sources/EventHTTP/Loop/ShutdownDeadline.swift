internal import CLibevent

/// A deadline for shutting down that holds while the loop is busy.
///
/// A timer on the loop cannot be one: a callback that holds the loop for a minute delays the
/// signal event and every timer with it (a SIGTERM during such a stall took 41 s to end the
/// process). Here a signal handler — chained in front of libevent's, which still runs and
/// starts the graceful shutdown on the loop — wakes a waiting thread on the first signal, and
/// that thread ends the process with `_exit(status)` once `seconds` have passed, whatever the
/// loop is doing. A clean shutdown that finishes first simply exits before it.
///
/// ```swift
/// loop.onSignal(SIGTERM) { app.shutdown { loop.stop() } }
/// try ShutdownDeadline.arm(signals: [SIGTERM, SIGINT], after: 9.5, exitStatus: 0)
/// ```
public enum ShutdownDeadline {
    /// Arms the deadline for `signals`. Call once, after ``EventLoop/onSignal(_:_:)`` registered
    /// the graceful handlers for the same signals (libevent installs its handlers then).
    public static func arm(signals: [Int32], after seconds: Double, exitStatus: Int32) throws(SystemError) {
        let milliseconds = UInt32(max(0, min(seconds, 3600)) * 1000)
        let result = signals.withUnsafeBufferPointer {
            tidings_arm_shutdown_deadline($0.baseAddress, Int32($0.count), milliseconds, exitStatus)
        }
        if result != 0 { throw SystemError.last("tidings_arm_shutdown_deadline") }
    }
}
