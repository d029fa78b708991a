import Foundation
import Observing
import Synchronization
import TidingsStore

/// The upstream client of the posts loader when several instances share a store.
///
/// - A background refresh goes upstream only from the instance that holds the cluster's
///   `posts-fetch` lease (taken for most of a refresh period, so one instance fetches per
///   period and another takes over within a period if it stops); the others answer their own
///   refresh "not modified" and receive the holder's document through the change path instead.
/// - Every fetch that does go upstream — a first load, a refresh a client asked for, the
///   holder's background refresh — first takes the `posts-load` lease (``PostsLoadLease``):
///   one fetch at a time in the cluster. An instance that finds another's live lease *joins*
///   that load instead of fetching: it waits (``RefreshGate/isJoining``) until the holder's
///   outcome arrives as a stored document, which ends this load with it
///   (``DataLoader/finishJoined(_:body:)``), or until the lease is free — the holder ended
///   without storing new posts, or died and its lease expired (at most the upstream timeout
///   plus a margin) — and then takes the lease and fetches itself.
struct ClusterFeedClient: HTTPClient {
    let base: any HTTPClient
    let gate: RefreshGate
    let lease: @Sendable () async -> Bool
    var load = PostsLoadLease.alone
    /// How often a joined load looks whether the holder's lease is free.
    var joinPoll: Duration = .milliseconds(100)

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        if gate.isBackgroundRefresh(), !(await Self.shielded(lease)) {
            return HTTPClientResponse(status: 304, headers: [:], body: Data())
        }
        while !(await Self.shielded(load.take)) {
            gate.setJoining(true)
            do {
                try await Task.sleep(for: joinPoll)
            } catch {
                // Cancelled: the holder's outcome ended this load (or it was abandoned).
                gate.setJoining(false)
                throw error
            }
        }
        gate.setJoining(false)
        // Ended meanwhile (the holder's outcome, or abandoned): no request, and the lease goes back.
        if Task.isCancelled {
            await Self.shielded(load.release)
            throw CancellationError()
        }
        do {
            let response = try await base.send(request)
            await Self.shielded(load.release)
            return response
        } catch {
            await Self.shielded(load.release)
            throw error
        }
    }

    /// Runs a lease call to its end even when this load is cancelled (a joined load is, when
    /// the holder's outcome arrives): a database call cut off halfway closed its PostgreSQL
    /// connection, and the next lease call, failing, fetched "anyway" — a second upstream
    /// request for one refresh (PostsClusterLoadTests, 1 run in about 10).
    private static func shielded<T: Sendable>(_ call: @escaping @Sendable () async -> T) async -> T {
        await Task { await call() }.value
    }
}

/// The cluster's `posts-load` lease: held by the one instance fetching the posts feed upstream
/// right now, on the store's clock, for at most the upstream timeout plus a margin.
struct PostsLoadLease: Sendable {
    /// Takes (or renews) the lease for one fetch; true when this instance may fetch. A store
    /// that cannot be asked answers true (fetching twice is better than not at all).
    var take: @Sendable () async -> Bool
    /// Lets the lease go shortly after a fetch ended: the short rest leaves time for the
    /// outcome to be stored, which ends the loads that joined this one.
    var release: @Sendable () async -> Void

    /// One instance alone: always fetch.
    static let alone = PostsLoadLease(take: { true }, release: {})
}

/// What the posts feed tells its upstream client about the next request: whether content is
/// held (so "not modified" keeps it) and whether a client asked for this refresh. Written on
/// the loop, read by the client off it.
final class RefreshGate: Sendable {
    private struct Flags { var holdsContent = false; var requested = false; var joining = false }
    private let flags = Mutex(Flags())

    func setHoldsContent(_ holds: Bool) { flags.withLock { $0.holdsContent = holds } }
    func markRequested() { flags.withLock { $0.requested = true } }
    func setJoining(_ joining: Bool) { flags.withLock { $0.joining = joining } }
    /// True while the running load waits for another instance's load instead of fetching.
    var isJoining: Bool { flags.withLock { $0.joining } }

    /// True for a refresh over held content that nobody asked for (consumes the request flag).
    func isBackgroundRefresh() -> Bool {
        flags.withLock { flags in
            defer { flags.requested = false }
            return flags.holdsContent && !flags.requested
        }
    }
}
