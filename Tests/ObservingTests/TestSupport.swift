import Foundation
import OpenCombine
@testable import Observing

/// A small preference set with constraints, declared once through @UserDefault.
@MainActor
final class TestPreferences: PreferencesBacked {
    @UserDefault("a") var a = 0
    @UserDefault("b") var b = 0
    @UserDefault("level", minimum: 0, maximum: 10) var level = 1
    @UserDefault("title", maxLength: 5) var title = "t"
    @UserDefault("mode", allowed: ["fast", "slow"]) var mode = "fast"
    @UserDefault("ratio") var ratio = 0.5
    let store: InMemoryKeyValueStore
    lazy var preferences = Preferences<Never>.declared(by: self, store: store)

    init(store: InMemoryKeyValueStore = InMemoryKeyValueStore()) {
        self.store = store
    }
}

/// An upstream that answers from a script, records every request, and can hang until cancelled.
actor ScriptedUpstream {
    enum Step: Sendable {
        case respond(HTTPClientResponse)
        case fail(HTTPClientError)
        case hang
    }

    private var steps: [Step]
    private(set) var requests: [HTTPClientRequest] = []

    init(_ steps: [Step]) {
        self.steps = steps
    }

    func handle(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        requests.append(request)
        // The last step repeats once the script runs out.
        let step = steps.count > 1 ? steps.removeFirst() : steps[0]
        switch step {
        case let .respond(response): return response
        case let .fail(error): throw error
        case .hang:
            try await Task.sleep(for: .seconds(3600))
            throw CancellationError()
        }
    }

    var requestCount: Int { requests.count }
}

struct ScriptedClient: HTTPClient {
    let upstream: ScriptedUpstream
    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        try await upstream.handle(request)
    }
}

/// A sleeper that records each requested delay on `delays`, returns at once for the first
/// `immediate` calls, then waits (cancellably) for an hour — so retry loops stop where the
/// test wants them to, without real waiting.
actor ScriptedSleeper: Sleeper {
    private let immediate: Int
    private var calls = 0
    nonisolated let delays: AsyncStream<Duration>
    private let continuation: AsyncStream<Duration>.Continuation

    init(immediate: Int) {
        self.immediate = immediate
        (delays, continuation) = AsyncStream.makeStream()
    }

    func sleep(for duration: Duration) async throws {
        calls += 1
        continuation.yield(duration)
        if calls > immediate { try await Task.sleep(for: .seconds(3600)) }
    }
}

func ok(_ json: String, headers: [String: String] = [:]) -> HTTPClientResponse {
    HTTPClientResponse(status: 200, headers: headers, body: Data(json.utf8))
}

/// Waits (without sleeping) until the loader's state satisfies `predicate`, observing `$state`.
@MainActor
func state<Value>(of loader: DataLoader<Value>, where predicate: @escaping (LoadState<Value>) -> Bool) async -> LoadState<Value> {
    let holder = SubscriptionHolder()
    return await withCheckedContinuation { continuation in
        holder.cancellable = loader.$state.sink { state in
            guard !holder.done, predicate(state) else { return }
            holder.done = true
            continuation.resume(returning: state)
        }
    }
}

final class SubscriptionHolder {
    var cancellable: AnyCancellable?
    var done = false
}
