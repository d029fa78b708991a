import Foundation
import Observing
import Synchronization
import TidingsStore

/// The upstream client of the posts loader when several instances share a store: a background
/// refresh goes upstream only from the instance that holds the cluster's `posts-fetch` lease
/// (taken for most of a refresh period, so one instance fetches per period and another takes
/// over within a period if it stops); the others answer their own refresh "not modified" and
/// receive the holder's document through the change path instead. A first load and a
/// refresh a client asked for always go upstream.
struct ClusterFeedClient: HTTPClient {
    let base: any HTTPClient
    let gate: RefreshGate
    let lease: @Sendable () async -> Bool

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        if gate.isBackgroundRefresh(), !(await lease()) {
            return HTTPClientResponse(status: 304, headers: [:], body: Data())
        }
        return try await base.send(request)
    }
}

/// What the posts feed tells its upstream client about the next request: whether content is
/// held (so "not modified" keeps it) and whether a client asked for this refresh. Written on
/// the loop, read by the client off it.
final class RefreshGate: Sendable {
    private struct Flags { var holdsContent = false; var requested = false }
    private let flags = Mutex(Flags())

    func setHoldsContent(_ holds: Bool) { flags.withLock { $0.holdsContent = holds } }
    func markRequested() { flags.withLock { $0.requested = true } }

    /// True for a refresh over held content that nobody asked for (consumes the request flag).
    func isBackgroundRefresh() -> Bool {
        flags.withLock { flags in
            defer { flags.requested = false }
            return flags.holdsContent && !flags.requested
        }
    }
}
