/// Waits for `work` to finish, at most `limit`: a read that should show what the store already
/// holds (another instance's change, or this instance's own commit still on its way into memory)
/// waits for this instance to apply it, but never hangs on a feed that cannot read the store.
@MainActor
func waitAtMost(_ limit: Duration, for work: @escaping @MainActor () async -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let once = ResumeOnce(continuation)
        Task { @MainActor in
            await work()
            once.resume()
        }
        Task { @MainActor in
            try? await Task.sleep(for: limit)
            once.resume()
        }
    }
}

/// A continuation resumed by whichever of two tasks comes first.
@MainActor
private final class ResumeOnce {
    private var continuation: CheckedContinuation<Void, Never>?
    init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }
    func resume() {
        continuation?.resume()
        continuation = nil
    }
}
