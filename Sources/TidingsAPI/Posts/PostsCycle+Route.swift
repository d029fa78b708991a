import Foundation
import Logging
import Observing
import TidingsStore

/// Where the loader's request goes, decided by the cycle when the request reaches its client
/// (``PostsCycleClient``): the cluster's coordination lives here, not in the loader.
///
/// - A background refresh goes upstream only from the holder of the `posts-fetch` lease (one
///   instance per refresh period); elsewhere it is answered "not modified" and the holder's
///   document arrives through the change path.
/// - Every other request first takes the `posts-load` lease: one upstream fetch at a time in the
///   cluster. Finding another's live lease, the load *joins* that one: it waits until the
///   holder's outcome is stored (newer posts: the request is answered with them), or until the
///   lease is given back — the holder's load ended, with a 304 or the same posts too — and is
///   then answered with the stored posts, or fetches itself when none are stored (the holder
///   failed before any posts). A holder killed mid-fetch never gives its lease back: it
///   expires, and the load that takes it over (``LeaseTake/takenOver``) fetches itself, since
///   the posts stored before are not that holder's outcome.
/// - Both leases are the feed URL's (``PostsLeaseName``): another `--feed-url` never joins.
/// - The wait is bounded (``PostsCycle/joinBudget``) and does not eat into this instance's own
///   request: that one gets the whole upstream timeout from when it leaves (``PostsCycleClient``).
extension PostsCycle {
    /// What the cycle tells its client to do with the loader's request.
    enum Answer: Sendable {
        /// Send it upstream (the load lease is held; the client gives it back after).
        case upstream
        /// Answer it with this response (no upstream request).
        case response(HTTPClientResponse)
        /// Answer it with the stored document's posts (no upstream request).
        case stored(StoredPostsDocument)
    }

    /// Decides the route of the running load's request. Throws `CancellationError` when the
    /// load is no longer the running one.
    func route() async throws -> Answer {
        let number = loadNumber
        guard case let .fetching(fetch) = state else { throw CancellationError() }
        if case .fromStore = fetch.route {
            // The newest stored posts (a later document may have come since the take began).
            guard let stored = storedWithPosts() else { throw CancellationError() }
            return answer(from: stored)
        }
        if fetch.reason == .background, held != nil {
            let mine = await Self.shielded(parts.fetchLease)
            try checkRunning(number)
            if !mine {
                setRoute(.skipped)
                return .response(HTTPClientResponse(status: 304))
            }
        }
        var joined = false
        let waitStarted = ContinuousClock.now
        while true {
            // This instance's own last release first: taken after it, a release still on its
            // way would let the new lease go (same holder) while its load runs.
            await leaseReleased()
            try checkRunning(number)
            let take = await Self.shielded(parts.loadLease.take)
            do { try checkRunning(number) } catch {
                if take.isGranted { await Self.shielded(parts.loadLease.release) }
                throw error
            }
            if take == .takenOver {
                // The holder died mid-fetch (its lease expired, never given back): its outcome
                // was never stored, and the posts stored before it are no answer to this load.
                parts.logger.notice("posts: the cluster's posts-load lease of this feed expired without being given back (its holder stopped mid-fetch) after \(Self.seconds(ContinuousClock.now - waitStarted)) s of waiting; this instance takes it over and fetches itself")
            } else if take.isGranted {
                // Joined, then free: the holder's load ended and its outcome is stored (the
                // holder gives the lease back only then); once this instance has read the
                // store, it is answered from the stored posts, no second request.
                if joined {
                    await parts.caughtUp()
                    do { try checkRunning(number) } catch {
                        await Self.shielded(parts.loadLease.release)
                        throw error
                    }
                    if let stored = storedWithPosts() {
                        await Self.shielded(parts.loadLease.release)
                        try checkRunning(number)
                        return answer(from: stored)
                    }
                    parts.logger.notice("posts: the cluster's posts-load lease is free after \(Self.seconds(ContinuousClock.now - waitStarted)) s and no posts are stored (its holder's load failed); this instance fetches itself")
                }
            }
            if take.isGranted {
                setRoute(.upstream)
                holdsLoadLease = true
                return .upstream
            }
            if !joined {
                parts.logger.debug("posts: another instance holds the cluster's posts-load lease of this feed; this load waits for its outcome")
            }
            joined = true
            setRoute(.joined)
            if let stored = storedNewerThanHeld() {
                return answer(from: stored)
            }
            if ContinuousClock.now - waitStarted >= joinBudget {
                throw LoadLeaseHeldThroughout(waited: joinBudget)
            }
            try await Task.sleep(for: parts.joinPoll)
            try checkRunning(number)
        }
    }

    /// The longest a load waits for other instances' loads of its feed: room for a dead
    /// holder's lease to run out (its whole lifetime) and for the load of the instance that took
    /// it over then to end (another lifetime). Zero for an instance alone (it never waits).
    var joinBudget: Duration { parts.loadLease.lifetime * 2 }

    /// The loader's deadline for one load: the wait for other instances' loads
    /// (``joinBudget``) and this instance's own request (the upstream timeout, which the
    /// cycle's client gives it from when it leaves), with a second to spare between the two.
    var loadTimeout: Duration {
        parts.policy.timeout + (joinBudget == .zero ? .zero : joinBudget + .seconds(1))
    }

    /// The failure of a load that waited for other instances the whole ``joinBudget`` and so
    /// never sent its own request.
    struct LoadLeaseHeldThroughout: Error, CustomStringConvertible {
        let waited: Duration
        var description: String {
            "other instances held the cluster's posts-load lease of this feed for all of the \(PostsCycle.seconds(waited)) s this load waited, so no request was sent"
        }
    }

    nonisolated static func seconds(_ duration: Duration) -> String {
        let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        return value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }

    /// Answers the request with `stored`'s posts, which are then held with its fetch time.
    private func answer(from stored: StoredPostsDocument) -> Answer {
        setRoute(.fromStore(stored.revision))
        takenFetchedAt = stored.fetchedAt
        takenValidators = stored.validators
        return .stored(stored)
    }

    private func checkRunning(_ number: UInt64) throws {
        guard number == loadNumber, case .fetching = state else { throw CancellationError() }
    }

    private func setRoute(_ route: Route) {
        guard case var .fetching(fetch) = state else { return }
        fetch.route = route
        state = .fetching(fetch)
    }

    /// Lets the load lease go if this instance holds it (its load's outcome is stored). The
    /// release runs off the loop; ``leaseReleased()`` waits for it.
    func releaseLoadLease() {
        guard holdsLoadLease else { return }
        holdsLoadLease = false
        let release = parts.loadLease.release
        let previous = leaseRelease
        leaseRelease = Task {
            await previous?.value
            await Self.shielded(release)
        }
    }

    /// Returns once every load lease this instance let go is given back to the store. Awaited
    /// before the lease is taken again and at shutdown, before the store closes: a release
    /// still on its way when the process exited left the lease held by no one until it expired
    /// (`--feed-timeout` + 5 s), and a restarted instance's first load waited that out, joined
    /// to a load that no longer ran, and failed after the whole timeout without asking its
    /// upstream.
    func leaseReleased() async {
        while let pending = leaseRelease {
            await pending.value
            // A release made while this one was awaited is the one to wait for now.
            if leaseRelease == pending { leaseRelease = nil }
        }
    }

    /// Runs a lease call to its end even when this load is cancelled (a joined load is, when it
    /// is answered): a PostgreSQL call cut off halfway closed its connection, and the next
    /// lease call, failing, fetched "anyway" — a second upstream request for one refresh.
    nonisolated static func shielded<T: Sendable>(_ call: @escaping @Sendable () async -> T) async -> T {
        await Task { await call() }.value
    }
}

/// The posts loader's upstream client: asks the cycle where each request goes
/// (``PostsCycle/route()``), then sends it upstream — giving the load lease back after — or
/// answers it as the cycle says.
struct PostsCycleClient: HTTPClient {
    /// The cycle, once made (the loader is made first, with this client).
    final class Link: Sendable {
        @MainActor weak var cycle: PostsCycle?
    }

    let link: Link
    let upstream: any HTTPClient
    /// The whole time this instance's own request gets (`--feed-timeout`).
    let upstreamTimeout: Duration

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        guard let cycle = await link.cycle else { throw CancellationError() }
        switch try await cycle.route() {
        case let .response(response):
            return response
        case let .stored(document):
            return document.answer
        case .upstream:
            // The cycle lets the load lease go once the outcome is stored (``PostsCycle/holdsLoadLease``).
            return try await sendUpstream(request)
        }
    }

    /// The request with the whole upstream timeout from now: the loader's deadline also
    /// covers a wait for other instances' loads (``PostsCycle/loadTimeout``), which must not
    /// shorten this instance's own request.
    private func sendUpstream(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        var request = request
        let deadline = ContinuousClock.now + upstreamTimeout
        request.timeout = upstreamTimeout
        request.deadline = deadline
        return try await withThrowingTaskGroup(of: HTTPClientResponse.self) { [request, upstream] group in
            group.addTask { try await upstream.send(request) }
            group.addTask {
                try await Task.sleep(until: deadline, clock: .continuous)
                throw HTTPClientError.timedOut
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}
