import EventHTTP
import HTTPTypes
import Observing

/// The answers that show the posts feed's state — `GET /posts` (with `?wait=N` or without) and
/// `POST /posts/refresh` — each given once what it shows is stored.
///
/// - The state is the stored document (``ServedPosts``). While the document of a newer load
///   state is being stored, an answer would show an older state than the `posts` events still
///   to come, and a client reading the answer and then the stream would take its state back.
///   So an answer waits until the writer has settled (``settle(_:)``): one commit.
/// - `?wait=N` also waits for the running load to end, or N seconds.
/// - Nothing blocks: each waiting request is a responder in a list, answered on
///   ``settle(_:)``, or by a ticker that runs only while the list is non-empty and checks
///   deadlines and shutdown (whose drain waits for in-flight requests, so a `?wait=30` must
///   not hold it) every ``tickInterval``.
///
/// Confined to the main actor.
@MainActor
final class PostsWaiters {
    static let tickInterval: Duration = .milliseconds(25)
    /// The longest an answer waits for its state to be stored: a store that does not answer
    /// is not waited for (the answer then shows what is stored).
    static let storeWait: Duration = .seconds(5)

    /// What the answers show of the load besides the stored document.
    private struct Progress {
        /// A load a client can see is running (`?wait=` waits for its end).
        var loading = false
        /// …over posts held: not stored, so the answer marks the document `loading`.
        var overHeldPosts = false

        init(_ state: LoadState<FetchedPosts>) {
            if case let .loading(previous) = state {
                loading = true
                overHeldPosts = previous != nil
            }
        }
    }

    private struct Waiter {
        let responder: Responder
        let status: HTTPResponse.Status
        let deadline: ContinuousClock.Instant
        let untilLoadEnds: Bool
    }

    private let served: ServedPosts
    private let isDraining: @MainActor () -> Bool
    private var waiting: [Waiter] = []
    private var ticker: Task<Void, Never>?
    /// The load as stored; nil while the document of a newer state is being stored.
    private var settled: Progress? = Progress(.idle)
    private var lastSettled = Progress(.idle)

    /// - Parameter isDraining: true once shutdown began (waiting requests are then answered at once).
    init(served: ServedPosts, isDraining: @escaping @MainActor () -> Bool) {
        self.served = served
        self.isDraining = isDraining
    }

    var count: Int { waiting.count }

    /// Answers `responder` with the stored state once it is stored, and with `seconds` > 0 once
    /// the running visible load ended too, or after `seconds`.
    func answer(_ responder: Responder, status: HTTPResponse.Status = .ok, within seconds: Double = 0) {
        if isDraining() { return responder.send(response(status)) }
        if let settled, seconds <= 0 || !settled.loading { return responder.send(response(status)) }
        let now = ContinuousClock.now
        let deadline = seconds > 0 ? now + .milliseconds(Int64(seconds * 1000)) : now + Self.storeWait
        waiting.append(Waiter(responder: responder, status: status, deadline: deadline, untilLoadEnds: seconds > 0))
        startTicker()
    }

    /// The writer is storing the document of a newer load state: answers wait for it.
    func storing() { settled = nil }

    /// The stored document shows `state` (or is as stored as it will be): the answers that
    /// waited for it go out.
    func settle(_ state: LoadState<FetchedPosts>) {
        let progress = Progress(state)
        settled = progress
        lastSettled = progress
        answer { !$0.untilLoadEnds || !progress.loading }
    }

    /// Answers every waiting request at once (shutdown).
    func answerAll() { answer { _ in true } }

    private func response(_ status: HTTPResponse.Status) -> Response {
        served.response(status: status, refreshing: (settled ?? lastSettled).overHeldPosts)
    }

    private func answer(where isDue: (Waiter) -> Bool) {
        guard waiting.contains(where: isDue) else { return }
        var due: [Waiter] = []
        waiting.removeAll { waiter in
            guard isDue(waiter) else { return false }
            due.append(waiter)
            return true
        }
        for waiter in due { waiter.responder.send(response(waiter.status)) }
        if waiting.isEmpty {
            ticker?.cancel()
            ticker = nil
        }
    }

    private func startTicker() {
        guard ticker == nil else { return }
        ticker = Task { [weak self] in
            while true {
                do { try await Task.sleep(for: Self.tickInterval) } catch { return }
                guard let self, !self.waiting.isEmpty else { break }
                let now = ContinuousClock.now, draining = self.isDraining()
                self.answer { draining || $0.deadline <= now }
            }
            self?.ticker = nil
        }
    }
}
