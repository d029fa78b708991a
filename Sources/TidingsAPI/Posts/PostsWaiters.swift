import EventHTTP

/// Requests held by `GET /posts?wait=N` until the load ends or their deadline passes.
///
/// Nothing blocks: each waiting request is a responder in a list, answered when the feed's
/// state leaves `loading` (``answerAll(with:)``) or by a ticker that runs only while the list is
/// non-empty and checks deadlines every ``tickInterval``. Confined to the main actor.
@MainActor
final class PostsWaiters {
    static let tickInterval: Duration = .milliseconds(25)

    private var waiting: [(responder: Responder, deadline: ContinuousClock.Instant)] = []
    private var ticker: Task<Void, Never>?
    private let tick: @MainActor () -> Void

    /// `tick` runs every ``tickInterval`` while requests wait.
    init(tick: @escaping @MainActor () -> Void) { self.tick = tick }

    var count: Int { waiting.count }

    func add(_ responder: Responder, deadline: ContinuousClock.Instant) {
        waiting.append((responder, deadline))
        guard ticker == nil else { return }
        ticker = Task { [weak self] in
            while true {
                do { try await Task.sleep(for: Self.tickInterval) } catch { return }
                guard let self, !self.waiting.isEmpty else { break }
                self.tick()
            }
            self?.ticker = nil
        }
    }

    /// Answers every waiting request with `response`.
    func answerAll(with response: @autoclosure () -> Response) {
        guard !waiting.isEmpty else { return }
        let answer = response()
        let all = waiting
        waiting = []
        ticker?.cancel()
        ticker = nil
        for item in all { item.responder.send(answer) }
    }

    /// Answers the requests whose deadline has passed.
    func answerExpired(with response: @autoclosure () -> Response) {
        let now = ContinuousClock.now
        guard waiting.contains(where: { $0.deadline <= now }) else { return }
        let answer = response()
        waiting.removeAll { item in
            guard item.deadline <= now else { return false }
            item.responder.send(answer)
            return true
        }
    }
}
