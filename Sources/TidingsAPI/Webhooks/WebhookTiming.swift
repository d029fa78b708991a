import Foundation

/// The clocks of webhook delivery: the retry schedule (API.md: about 5 s, 30 s, 2 min, 10 min,
/// 1 h, then hourly, for 24 h), the attempt's deadlines (5 s to connect, 10 s in all) and the
/// lease that makes one instance at a time deliver for a hook.
///
/// Tests only: `TIDINGS_TEST_WEBHOOK_BACKOFF` (comma-separated seconds, the last one repeated),
/// `TIDINGS_TEST_WEBHOOK_GIVE_UP` (seconds of failures before a hook is marked failing),
/// `TIDINGS_TEST_WEBHOOK_TIMEOUT` (seconds an attempt may take) and `TIDINGS_TEST_WEBHOOK_LEASE`
/// (seconds) shorten them, so the suite need not wait minutes. Not part of the contract.
struct WebhookTiming: Sendable, Equatable {
    var backoff: [Duration] = [.seconds(5), .seconds(30), .seconds(120), .seconds(600), .seconds(3600)]
    var giveUpAfter: Duration = .seconds(24 * 3600)
    var connectTimeout: Duration = .seconds(5)
    var attemptTimeout: Duration = .seconds(10)
    var lease: Duration = .seconds(30)
    /// How often an instance that does not hold a hook's lease looks again (and refreshes what
    /// `GET /webhooks` and the backlog metric show).
    var standby: Duration = .seconds(2)

    static func fromEnvironment(_ environment: [String: String]) -> WebhookTiming {
        var timing = WebhookTiming()
        func seconds(_ text: String) -> Duration? {
            guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite, value >= 0 else { return nil }
            return .milliseconds(Int64(value * 1000))
        }
        if let text = environment["TIDINGS_TEST_WEBHOOK_BACKOFF"] {
            let steps = text.split(separator: ",").compactMap { seconds(String($0)) }
            if !steps.isEmpty { timing.backoff = steps }
        }
        if let value = environment["TIDINGS_TEST_WEBHOOK_GIVE_UP"].flatMap(seconds) { timing.giveUpAfter = value }
        if let value = environment["TIDINGS_TEST_WEBHOOK_TIMEOUT"].flatMap(seconds), value > .zero {
            timing.attemptTimeout = value
            timing.connectTimeout = min(timing.connectTimeout, value)
        }
        if let value = environment["TIDINGS_TEST_WEBHOOK_LEASE"].flatMap(seconds), value > .zero {
            timing.lease = value
            timing.standby = min(timing.standby, value / 3)
        }
        return timing
    }

    /// The wait before the attempt after `failures` failed ones (1: the first retry), jittered by
    /// ±20 % so that hooks failing together do not retry together.
    func delay(afterFailures failures: Int, jitter: Double = Double.random(in: 0.8...1.2)) -> Duration {
        let step = backoff[min(max(failures, 1), backoff.count) - 1]
        return step * jitter
    }

    /// A lease with less than this left is renewed before an attempt: the attempt's deadline
    /// and some slack, so the lease never runs out while a delivery is under way.
    var leaseMargin: Duration { min(attemptTimeout + .seconds(2), lease * 0.6) }

    /// How long a stopping instance keeps the lease after cutting an attempt off: what the
    /// receiver had read of it is still being handled there for a moment.
    var abandonedAttemptGrace: Duration { .seconds(1) }
}

extension Duration {
    /// Whole milliseconds (rounded down).
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
