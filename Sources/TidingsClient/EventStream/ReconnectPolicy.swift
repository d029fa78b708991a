/// When to reconnect an event stream: jittered exponential back-off from the server's
/// `retry:` (or ``initialDelay`` until it sent one), capped at ``maxDelay``.
///
/// The n-th consecutive failed attempt waits `base · 2^(n−1)`, capped, times a random factor
/// in `1 − jitter ... 1`, so clients cut off together (a server restart) do not come back
/// together. A connection that delivered an event resets the count.
public struct ReconnectPolicy: Sendable {
    public var initialDelay: Duration
    public var maxDelay: Duration
    /// The share of the delay that is random (0 = none, 1 = anywhere from 0 to the delay).
    public var jitter: Double
    /// Random numbers in 0..<1 (injectable so tests can pin the jitter).
    public var random: @Sendable () -> Double

    public init(initialDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(30), jitter: Double = 0.5,
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.jitter = min(max(jitter, 0), 1)
        self.random = random
    }

    /// The wait before the next attempt after `failures` (≥ 1) consecutive failures, given the
    /// server's last `retry:` in milliseconds.
    public func delay(afterFailures failures: Int, serverRetryMilliseconds: Int?) -> Duration {
        let base = serverRetryMilliseconds.map { Duration.milliseconds($0) } ?? initialDelay
        var delay = min(base, maxDelay)
        for _ in 1..<max(1, min(failures, 64)) {
            delay *= 2
            if delay >= maxDelay { delay = maxDelay; break }
        }
        let factor = 1 - jitter * min(max(random(), 0), 1)
        return delay * factor
    }
}
