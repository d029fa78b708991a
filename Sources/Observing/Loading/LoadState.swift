public import Foundation

/// A successfully loaded value and when it was fetched.
public struct Loaded<Value: Sendable>: Sendable {
    public let value: Value
    public let fetchedAt: Date
    public init(value: Value, fetchedAt: Date) {
        self.value = value
        self.fetchedAt = fetchedAt
    }
}

/// The phase of a ``LoadState`` (the `"state"` string of `GET /posts`).
public enum LoadPhase: String, Sendable, Hashable {
    case idle, loading, loaded, failed
}

/// Where a ``DataLoader`` stands. The last good value is kept through loading and failure.
public enum LoadState<Value: Sendable>: Sendable {
    /// Nothing loaded and nothing running.
    case idle
    /// A load the caller asked for is running; `previous` is the last good value, if any.
    case loading(previous: Loaded<Value>?)
    case loaded(Loaded<Value>)
    /// The last load failed; `previous` is still served.
    case failed(DataLoaderError, previous: Loaded<Value>?)

    public var phase: LoadPhase {
        switch self {
        case .idle: .idle
        case .loading: .loading
        case .loaded: .loaded
        case .failed: .failed
        }
    }

    /// The value to serve: the current or last good one.
    public var lastGood: Loaded<Value>? {
        switch self {
        case .idle: nil
        case let .loading(previous), let .failed(_, previous): previous
        case let .loaded(loaded): loaded
        }
    }

    public var value: Value? { lastGood?.value }

    public var error: DataLoaderError? {
        if case let .failed(error, _) = self { return error }
        return nil
    }

    /// Same phase, same error, same last good value (by fetch time): nothing to announce.
    func isSameAnnouncement(as other: LoadState) -> Bool {
        phase == other.phase && error == other.error && lastGood?.fetchedAt == other.lastGood?.fetchedAt
    }
}

/// Why a load failed.
public enum DataLoaderError: Error, Sendable, Hashable, CustomStringConvertible {
    case connectionFailed(String)
    case timedOut(after: Duration)
    /// The upstream answered with a status outside 2xx (or a 304 the loader did not ask for).
    case unexpectedStatus(Int)
    case bodyTooLarge(limit: Int)
    case notDecodable(String)
    /// The client refused the answer by a rule (redirect elsewhere, unboundable encoding).
    case refused(String)

    /// A sentence that says which failure it was (for `"error": {"message"}`).
    public var message: String {
        switch self {
        case let .connectionFailed(detail): "connection to the upstream failed: \(detail)"
        case let .timedOut(after): "the upstream did not answer within \(after.components.seconds) s"
        case let .unexpectedStatus(status): "the upstream answered with status \(status)"
        case let .bodyTooLarge(limit): "the upstream's answer is larger than \(limit) bytes"
        case let .notDecodable(detail): "the upstream's answer could not be decoded: \(detail)"
        case let .refused(detail): "the upstream's answer was refused: \(detail)"
        }
    }

    /// The upstream's HTTP status, for ``unexpectedStatus(_:)``.
    public var upstreamStatus: Int? {
        if case let .unexpectedStatus(status) = self { return status }
        return nil
    }

    public var description: String { message }
}

/// Tuning for a ``DataLoader``.
public struct DataLoaderPolicy: Sendable, Hashable {
    /// A load is abandoned (``DataLoaderError/timedOut(after:)``) after this long.
    public var timeout: Duration = .seconds(10)
    /// Larger answers fail with ``DataLoaderError/bodyTooLarge(limit:)``.
    public var maxBodyBytes = 8 << 20
    /// First retry delay after a failure; doubled per consecutive failure. nil: no retries.
    public var retryBase: Duration? = .seconds(1)
    /// The longest retry delay.
    public var retryCap: Duration = .seconds(60)
    /// Once loaded, refresh in the background this often (nil: never).
    public var refreshInterval: Duration?

    public init(timeout: Duration = .seconds(10), maxBodyBytes: Int = 8 << 20, retryBase: Duration? = .seconds(1),
                retryCap: Duration = .seconds(60), refreshInterval: Duration? = nil) {
        self.timeout = timeout
        self.maxBodyBytes = maxBodyBytes
        self.retryBase = retryBase
        self.retryCap = retryCap
        self.refreshInterval = refreshInterval
    }

    /// The delay before retry number `failures` (1-based): base · 2^(failures−1), capped.
    public func retryDelay(afterFailures failures: Int) -> Duration? {
        guard let retryBase, failures > 0 else { return nil }
        var delay = retryBase
        for _ in 1..<min(failures, 63) {
            delay *= 2
            if delay >= retryCap { return retryCap }
        }
        return min(delay, retryCap)
    }
}
