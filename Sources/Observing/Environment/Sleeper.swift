/// Waits for a while; the loader's retries and periodic refreshes go through it, so tests
/// swap in one that does not really wait.
public protocol Sleeper: Sendable {
    /// Returns after `duration`, or throws `CancellationError` when the task is cancelled.
    func sleep(for duration: Duration) async throws
}

/// The real thing: `Task.sleep` on the continuous clock.
public struct TaskSleeper: Sleeper {
    public init() {}
    public func sleep(for duration: Duration) async throws {
        try await Task.sleep(for: duration)
    }
}

enum SleeperKey: EnvironmentKey {
    static let defaultValue: any Sleeper = TaskSleeper()
}

extension EnvironmentValues {
    /// How the data loader waits between retries and refreshes (default: ``TaskSleeper``).
    public var sleeper: any Sleeper {
        get { self[SleeperKey.self] }
        set { self[SleeperKey.self] = newValue }
    }
}
