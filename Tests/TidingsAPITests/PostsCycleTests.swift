import EventHTTP
import Foundation
import HTTPTypes
import Logging
import Observing
import Synchronization
import TestFixtures
import TidingsStore
import XCTest
@testable import TidingsAPI

/// The posts cycle's table of transitions (`PostsCycle.swift`), row by row, in process: a cycle
/// over the real application's state and write pipeline (SQLite), a scripted upstream and
/// scripted cluster leases, and a second store on the same directory standing for another
/// instance. Each test names the row it checks.
@MainActor
final class PostsCycleTests: XCTestCase {
    private static let feedURL = "http://127.0.0.1:9/feed"
    private static let feed = #"[{"id":1,"title":"one","body":"b"}]"#
    private var directory: URL!
    private var app: TidingsApplication!
    private var upstream: ScriptedUpstream!
    private var leases: ScriptedLeases!

    override func setUp() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cycle-\(UUID().uuidString)")
        var configuration = TidingsConfiguration()
        configuration.dataDir = directory.path
        configuration.feedURL = Self.feedURL
        configuration.feedRefresh = 0
        configuration.feedTimeout = 5
        app = try TidingsApplication(configuration: configuration, loop: try EventLoop())
        upstream = ScriptedUpstream()
        leases = ScriptedLeases()
    }

    override func tearDown() async throws {
        app = nil
        try? FileManager.default.removeItem(at: directory)
    }

    /// A cycle over the application's state (its own posts feed is never used here).
    private func makeCycle(refresh: Duration? = nil) -> PostsCycle {
        let resources: TidingsResources = app.resources
        var policy = DataLoaderPolicy(timeout: .seconds(5), retryBase: .milliseconds(200), retryCap: .milliseconds(200))
        policy.refreshInterval = refresh
        let source = FeedSource(configuration: app.configuration, boundPort: { 0 })
        resources.state.postsSource = source
        let waiters = PostsWaiters(served: ServedPosts(state: resources.state), isDraining: { false })
        let leases = self.leases!
        var parts = PostsCycle.Parts(
            state: resources.state, writes: resources.writes, source: source, waiters: waiters, policy: policy,
            fetchLease: { leases.fetch() }, loadLease: leases.loadLease,
            catchUp: { [feed = resources.feed] revision in
                feed.ring()
                await feed.waitUntilApplied(revision)
            },
            logger: Logger(label: "test"))
        parts.joinPoll = .milliseconds(10)
        let meter = UpstreamFetchMeter(logger: Logger(label: "test"))
        return PostsCycle(parts, upstream: upstream) { client in
            PostsLoader.make(source: source, configuration: self.app.configuration, client: client, meter: meter, policy: policy)
        }
    }

    private var stored: String? { app.resources.state.posts?.document }
    private var storedState: String? { stored.flatMap(Self.stateMember) }

    private static func stateMember(_ document: String) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])?["state"] as? String
    }

    /// A stored `GET /posts` object of this feed.
    private static func document(state: String, fetchedAt: String, title: String) -> String {
        #"{"error":null,"fetchedAt":"\#(fetchedAt)","posts":[{"body":"b","id":7,"title":"\#(title)"}],"#
            + #""source":"\#(feedURL)","state":"\#(state)"}"#
    }

    /// Commits `document` as another instance would, without waiting for this one to apply it.
    private func commitElsewhere(_ document: String) async throws -> UInt64 {
        let other = try SQLiteStore(directory: directory)
        let changes = try await other.commit(StoreWrite([.setPosts(document)]))
        await other.close()
        return try XCTUnwrap(changes.last?.revision)
    }

    /// Waits (without blocking the main actor, where the cycle runs) until `condition` holds.
    private func until(_ what: String, _ condition: () -> Bool) async {
        let held = await eventually(within: 10) { () async -> Bool in condition() }
        XCTAssertTrue(held, "never: \(what)")
    }

    // MARK: idle

    func test_idle_firstRead_nothingStored_storesLoadingThenFetches() async throws {
        upstream.script([.answer(200, Self.feed, etag: "v1")])
        let cycle = makeCycle()
        cycle.read()
        XCTAssertEqual(cycle.state, .storing(then: .fetch(.firstRead)))
        await until("loaded is stored") { storedState == "loaded" }
        XCTAssertEqual(cycle.state, .idle)
        XCTAssertEqual(upstream.requests.count, 1)
        XCTAssertEqual(cycle.held?.value.posts.map(\.title), ["one"])
    }

    func test_idle_firstRead_storedHasPosts_takesThemWithoutARequest() async throws {
        let revision = try await commitElsewhere(Self.document(state: "loaded", fetchedAt: "2026-11-26T10:00:00.000Z", title: "elsewhere"))
        await app.resources.feed.waitUntilApplied(revision)
        let cycle = makeCycle()
        // Taken at once on creation (idle with a newer stored document); a first read joins it.
        XCTAssertEqual(cycle.state, .fetching(.init(reason: .taking(revision), route: .fromStore(revision))))
        cycle.read()
        await until("the stored posts are held") { cycle.state == .idle }
        XCTAssertEqual(cycle.held?.value.posts.map(\.title), ["elsewhere"])
        XCTAssertEqual(cycle.shown, .asStored)
        XCTAssertEqual(app.resources.state.posts?.revision, revision, "nothing was stored over it")
        XCTAssertEqual(upstream.requests.count, 0)
    }

    func test_idle_refresh_overHeldPosts_fetchesWithoutStoringLoading() async throws {
        upstream.script([.answer(200, Self.feed, etag: "v1"), .answer(304, "", etag: "v1")])
        let cycle = makeCycle()
        cycle.read()
        await until("loaded") { storedState == "loaded" && cycle.state == .idle }
        let revision = app.resources.state.posts?.revision
        cycle.refresh()
        XCTAssertEqual(cycle.state, .fetching(.init(reason: .requested)), "no `loading` over held posts is stored")
        await until("the refresh ended") { cycle.state == .idle }
        XCTAssertEqual(app.resources.state.posts?.revision, revision, "a 304 stores nothing")
        XCTAssertEqual(upstream.requests.last?.headers["If-None-Match"], "v1")
    }

    func test_idle_timer_backgroundRefreshIsSkippedWhenAnotherInstanceHoldsTheFetchLease() async throws {
        upstream.script([.answer(200, Self.feed, etag: "v1")])
        leases.fetchIsMine = false
        let cycle = makeCycle(refresh: .milliseconds(30))
        cycle.read()
        await until("loaded") { storedState == "loaded" && cycle.state == .idle }
        await until("background refreshes asked for the fetch lease") { leases.fetchAsks >= 3 }
        XCTAssertEqual(upstream.requests.count, 1, "skipped refreshes send no request")
        XCTAssertEqual(storedState, "loaded")
    }

    func test_idle_storedDocumentNewerThanHeld_isTaken() async throws {
        upstream.script([.answer(200, Self.feed, etag: "v1")])
        let cycle = makeCycle()
        cycle.read()
        await until("loaded") { storedState == "loaded" && cycle.state == .idle }
        let revision = try await commitElsewhere(Self.document(state: "loaded", fetchedAt: "2099-01-01T00:00:00.000Z", title: "newer"))
        await until("the newer posts are held") { cycle.held?.value.posts.first?.title == "newer" && cycle.state == .idle }
        XCTAssertEqual(app.resources.state.posts?.revision, revision)
        XCTAssertEqual(upstream.requests.count, 1)
    }

    // MARK: fetching

    func test_fetching_refresh_joinsTheRunningLoad() async throws {
        upstream.script([.hang])
        let cycle = makeCycle()
        cycle.read()
        await until("fetching") { upstream.requests.count == 1 }
        cycle.refresh()
        XCTAssertEqual(cycle.state, .fetching(.init(reason: .firstRead, route: .upstream)))
        XCTAssertTrue(cycle.cancel())
    }

    func test_fetching_joined_storedDocumentNewerThanHeld_answersTheRequestFromIt() async throws {
        leases.loadIsMine = false
        let cycle = makeCycle()
        cycle.read()
        await until("joined") { cycle.state == .fetching(.init(reason: .firstRead, route: .joined)) }
        let revision = try await commitElsewhere(Self.document(state: "loaded", fetchedAt: "2026-11-26T10:00:00.000Z", title: "holder's"))
        await until("answered from the holder's document") { cycle.state == .idle }
        XCTAssertEqual(cycle.held?.value.posts.first?.title, "holder's")
        XCTAssertEqual(app.resources.state.posts?.revision, revision, "nothing stored over the holder's outcome")
        XCTAssertEqual(upstream.requests.count, 0)
    }

    /// The holder's load ended in a 304 (nothing new stored): once its lease is free, the joined
    /// load is answered from the stored posts — no request of its own.
    func test_fetching_joined_leaseFree_storedHasPosts_noRequest() async throws {
        let revision = try await commitElsewhere(Self.document(state: "loaded", fetchedAt: "2026-11-26T10:00:00.000Z", title: "held"))
        await app.resources.feed.waitUntilApplied(revision)
        let cycle = makeCycle()
        await until("the stored posts are held") { cycle.state == .idle && cycle.held != nil }
        leases.loadIsMine = false
        cycle.refresh()
        await until("joined") { cycle.state == .fetching(.init(reason: .requested, route: .joined)) }
        leases.loadIsMine = true
        await until("the refresh ended") { cycle.state == .idle }
        XCTAssertEqual(upstream.requests.count, 0, "the holder's 304 cost this instance no request")
        XCTAssertEqual(app.resources.state.posts?.revision, revision)
        XCTAssertEqual(leases.releases, 1, "the lease taken to find it free went back at once")
    }

    /// The holder was killed mid-fetch: its lease expired without being given back, so the
    /// posts stored before are not its outcome. The joined load that takes the lease over
    /// fetches itself. Before, it was answered with those older posts, as if the dead holder had
    /// confirmed them.
    func test_fetching_joined_leaseTakenOver_storedHasPosts_fetchesItself() async throws {
        let revision = try await commitElsewhere(Self.document(state: "loaded", fetchedAt: "2026-11-26T10:00:00.000Z", title: "held"))
        await app.resources.feed.waitUntilApplied(revision)
        upstream.script([.answer(200, Self.feed)])
        let cycle = makeCycle()
        await until("the stored posts are held") { cycle.state == .idle && cycle.held != nil }
        leases.loadIsMine = false
        cycle.refresh()
        await until("joined") { cycle.state == .fetching(.init(reason: .requested, route: .joined)) }
        leases.holderDied = true
        leases.loadIsMine = true
        await until("the refresh ended") { cycle.state == .idle }
        XCTAssertEqual(upstream.requests.count, 1, "the dead holder's lease was taken over without a request of this instance's own")
        XCTAssertEqual(cycle.held?.value.posts.first?.title, "one", "answered with the posts stored before the dead holder's load")
        XCTAssertNotEqual(app.resources.state.posts?.revision, revision, "this instance's own outcome is stored")
    }

    func test_fetching_joined_leaseFree_nothingStored_fetchesItself() async throws {
        upstream.script([.answer(200, Self.feed)])
        leases.loadIsMine = false
        let cycle = makeCycle()
        cycle.read()
        await until("joined") { cycle.state == .fetching(.init(reason: .firstRead, route: .joined)) }
        leases.loadIsMine = true
        await until("loaded") { storedState == "loaded" && cycle.state == .idle }
        XCTAssertEqual(upstream.requests.count, 1)
    }

    /// A holder killed mid-fetch leaves its lease held until it expires; the joined load then
    /// takes it over, and its own request gets the whole upstream timeout from when it leaves.
    /// Before, the loader's one deadline covered the wait too: a wait as long as the timeout
    /// (the lease lives the timeout + 5 s) left the request no time at all.
    func test_fetching_joined_leaseTakenOver_theRequestGetsTheWholeUpstreamTimeout() async throws {
        upstream.script([.answer(200, Self.feed)])
        leases.loadIsMine = false
        let cycle = makeCycle()
        cycle.read()
        await until("joined") { cycle.state == .fetching(.init(reason: .firstRead, route: .joined)) }
        try await Task.sleep(for: .milliseconds(100))
        let expired = ContinuousClock.now
        leases.holderDied = true
        leases.loadIsMine = true
        await until("loaded") { storedState == "loaded" && cycle.state == .idle }
        XCTAssertEqual(upstream.requests.count, 1)
        let deadline = try XCTUnwrap(upstream.deadlines.first ?? nil)
        XCTAssertGreaterThanOrEqual(deadline, expired + .seconds(5), "the wait for the lease was taken from the request's timeout")
    }

    /// Other instances hold the lease throughout: the wait ends after twice the lease's lifetime
    /// (a dead holder's lease has run out by then, and a load that took it over has ended), and
    /// the failure says no request was sent — not that the upstream did not answer.
    func test_fetching_joined_leaseHeldThroughout_failsAfterTheBudget_sayingNoRequestWasSent() async throws {
        leases.loadIsMine = false
        leases.lifetime = .milliseconds(100)
        let cycle = makeCycle()
        XCTAssertEqual(cycle.joinBudget, .milliseconds(200))
        cycle.read()
        await until("failed is stored") { storedState == "failed" }
        let document = try XCTUnwrap(stored)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(document.utf8)) as? [String: Any])
        let message = try XCTUnwrap((json["error"] as? [String: Any])?["message"] as? String)
        XCTAssertTrue(message.contains("held the cluster's posts-load lease of this feed for all of the 0.2 s this load waited, so no request was sent"), message)
        XCTAssertEqual(upstream.requests.count, 0)
    }

    /// The leases are named by the feed URL (instances of another `--feed-url` never wait on
    /// this one's fetch), bounded whatever its length.
    func test_leaseNames_areTheFeedURLs_andBounded() {
        let name = PostsLeaseName.load(source: "http://a.example/feed")
        XCTAssertEqual(name, PostsLeaseName.load(source: "http://a.example/feed"))
        XCTAssertNotEqual(name, PostsLeaseName.load(source: "http://b.example/feed"))
        XCTAssertNotEqual(PostsLeaseName.fetch(source: "http://a.example/feed"), PostsLeaseName.fetch(source: "http://b.example/feed"))
        XCTAssertTrue(name.hasPrefix("posts-load:"))
        XCTAssertEqual(PostsLeaseName.load(source: "http://a.example/" + String(repeating: "x", count: 100_000)).utf8.count, name.utf8.count)
    }

    func test_fetching_loaderEndedInFailure_storesIt_andRetries() async throws {
        upstream.script([.answer(502, "{}"), .answer(200, Self.feed)])
        let cycle = makeCycle()
        cycle.read()
        await until("failed is stored") { storedState == "failed" }
        XCTAssertEqual(cycle.failures, 1)
        await until("the retry loaded") { storedState == "loaded" && cycle.state == .idle }
        XCTAssertEqual(upstream.requests.count, 2)
        XCTAssertEqual(cycle.failures, 0)
    }

    func test_fetching_cancel_returnsToIdle_orToTheHeldPosts() async throws {
        upstream.script([.hang, .answer(200, Self.feed), .hang])
        let cycle = makeCycle()
        cycle.read()
        await until("fetching") { upstream.requests.count == 1 }
        XCTAssertTrue(cycle.cancel())
        await until("idle is stored") { storedState == "idle" && cycle.state == .idle }
        cycle.refresh()
        await until("loaded") { storedState == "loaded" && cycle.state == .idle }
        let revision = app.resources.state.posts?.revision
        cycle.refresh()
        await until("fetching") { upstream.requests.count == 3 }
        XCTAssertTrue(cycle.cancel())
        XCTAssertEqual(cycle.shown, .loaded)
        await until("idle") { cycle.state == .idle }
        XCTAssertEqual(app.resources.state.posts?.revision, revision, "back to the held posts is no news")
        XCTAssertFalse(cycle.cancel(), "nothing runs")
    }

    // MARK: storing

    /// The race of a cold instance, in process: another instance's `loaded` is committed, and
    /// this instance decides before it has applied it. Its `loading` is refused by the store,
    /// and decided again on the caught-up view: the other's posts are taken, nothing stored.
    func test_storing_refused_decidesAgain_andTakesTheNewerPosts() async throws {
        let cycle = makeCycle()
        let revision = try await commitElsewhere(Self.document(state: "loaded", fetchedAt: "2026-11-26T10:00:00.000Z", title: "first"))
        XCTAssertNil(app.resources.state.posts, "this instance has not heard of it yet")
        cycle.read()
        XCTAssertEqual(cycle.state, .storing(then: .fetch(.firstRead)))
        await until("the other's posts are held") { cycle.state == .idle && cycle.held != nil }
        XCTAssertEqual(app.resources.state.posts?.revision, revision, "a cold `loading` was stored over `loaded`")
        XCTAssertEqual(cycle.held?.value.posts.first?.title, "first")
        XCTAssertEqual(upstream.requests.count, 0)
    }

    func test_storing_refresh_fetchesOnceStored() async throws {
        upstream.script([.hang, .answer(200, Self.feed)])
        let cycle = makeCycle()
        cycle.read()
        await until("fetching") { upstream.requests.count == 1 }
        XCTAssertTrue(cycle.cancel())
        XCTAssertEqual(cycle.state, .storing(then: .settle), "idle is being stored")
        cycle.refresh()
        XCTAssertEqual(cycle.state, .storing(then: .fetch(.requested)))
        await until("loaded") { storedState == "loaded" && cycle.state == .idle }
    }

    // MARK: any

    func test_any_stop_cancelsTheLoadAndStoresNothingMore() async throws {
        upstream.script([.hang])
        let cycle = makeCycle()
        cycle.read()
        await until("fetching") { upstream.requests.count == 1 }
        let revision = app.resources.state.posts?.revision
        cycle.stop()
        XCTAssertEqual(cycle.state, .stopped)
        cycle.refresh()
        cycle.read()
        XCTAssertEqual(cycle.state, .stopped)
        XCTAssertFalse(cycle.cancel())
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertEqual(app.resources.state.posts?.revision, revision)
    }

    /// The flake of PostsAdoptionCostTests' restart test, made certain: the lease release after
    /// a load was a task nobody waited for, so a process stopped right after its load exited
    /// (store closed) before the release reached the store — the lease stayed held by no one
    /// for `--feed-timeout` + 5 s, and the restarted instance's first load joined it and timed
    /// out without asking its upstream. Shutdown (the task before the store closes) now returns
    /// only once the lease is given back.
    func test_any_shutdown_returnsOnlyOnceTheLoadLeaseIsGivenBack() async throws {
        upstream.script([.answer(200, Self.feed)])
        let resources: TidingsResources = app.resources
        let feed = PostsFeed(configuration: app.configuration, state: resources.state, writes: resources.writes,
                             client: upstream, boundPort: { 0 }, isDraining: { false }, logger: Logger(label: "test"))
        feed.loadLease = { [leases] _ in leases!.loadLease }
        leases.holdReleases = true
        feed.fetchIfNeeded()
        await until("loaded is stored and the lease release is under way") {
            storedState == "loaded" && leases.releasesStarted == 1
        }
        let finished = Flag()
        let shutdown = Task { @MainActor in
            await feed.shutdown()
            finished.isSet = true
        }
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertFalse(finished.isSet, "shutdown went on (to close the store) while the load lease was still held")
        leases.holdReleases = false
        await shutdown.value
        XCTAssertEqual(leases.releases, 1)
    }

    /// A release still on its way must not reach the store after the next take (same holder:
    /// it would let the new lease go while that load runs).
    func test_fetching_theLeaseIsTakenOnlyOnceTheLastReleaseIsGivenBack() async throws {
        upstream.script([.answer(200, Self.feed), .answer(200, #"[{"id":2,"title":"two","body":"b"}]"#)])
        let cycle = makeCycle()
        leases.holdReleases = true
        cycle.read()
        await until("loaded is stored and the lease release is under way") {
            storedState == "loaded" && cycle.state == .idle && leases.releasesStarted == 1
        }
        cycle.refresh()
        try await Task.sleep(for: .milliseconds(50))
        XCTAssertEqual(leases.takes, 1, "the lease was taken again while its release was on its way")
        leases.holdReleases = false
        await until("the refresh loaded") { cycle.held?.value.posts.first?.title == "two" && cycle.state == .idle }
        await until("its lease is given back") { leases.releases == 2 }
        XCTAssertEqual(leases.events, ["take", "release", "take", "release"])
    }
}

/// An upstream that answers from a script, in order, and records every request.
private final class ScriptedUpstream: HTTPClient, Sendable {
    enum Step: Sendable {
        case answer(Int, String, etag: String? = nil)
        /// Never answers (until cancelled).
        case hang
    }

    private struct Script {
        var steps: [Step] = []
        var requests: [HTTPClientRequest] = []
    }

    private let state = Mutex(Script())

    func script(_ steps: [Step]) { state.withLock { $0.steps = steps } }

    var requests: [(url: URL, headers: [String: String])] {
        state.withLock { $0.requests.map { ($0.url, $0.headers) } }
    }

    /// Each request's deadline, as the upstream client got it.
    var deadlines: [ContinuousClock.Instant?] { state.withLock { $0.requests.map(\.deadline) } }

    func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let step = state.withLock { script -> Step in
            script.requests.append(request)
            return script.steps.isEmpty ? .answer(500, "{}") : script.steps.removeFirst()
        }
        switch step {
        case let .answer(status, body, etag):
            return HTTPClientResponse(status: status, headers: etag.map { ["ETag": $0] } ?? [:], body: Data(body.utf8))
        case .hang:
            try await Task.sleep(for: .seconds(60))
            throw CancellationError()
        }
    }
}

/// A flag a main-actor task sets.
@MainActor
private final class Flag {
    var isSet = false
}

/// The cluster's leases as the test sets them. `holdReleases` keeps each release of the load
/// lease waiting (started, not done) until it is set back to false.
private final class ScriptedLeases: Sendable {
    private struct State {
        var fetchIsMine = true
        var loadIsMine = true
        var holderDied = false
        var fetchAsks = 0
        var takes = 0
        var releasesStarted = 0
        var releases = 0
        var holdReleases = false
        var events: [String] = []
        var lifetime: Duration = .seconds(5)
    }

    private let state = Mutex(State())

    var fetchIsMine: Bool {
        get { state.withLock { $0.fetchIsMine } }
        set { state.withLock { $0.fetchIsMine = newValue } }
    }

    var loadIsMine: Bool {
        get { state.withLock { $0.loadIsMine } }
        set { state.withLock { $0.loadIsMine = newValue } }
    }

    /// A granted take replaces a row its holder never gave back (``LeaseTake/takenOver``).
    var holderDied: Bool {
        get { state.withLock { $0.holderDied } }
        set { state.withLock { $0.holderDied = newValue } }
    }

    var holdReleases: Bool {
        get { state.withLock { $0.holdReleases } }
        set { state.withLock { $0.holdReleases = newValue } }
    }

    /// The lifetime of a take (a cycle made after it is set waits twice that at most).
    var lifetime: Duration {
        get { state.withLock { $0.lifetime } }
        set { state.withLock { $0.lifetime = newValue } }
    }

    var fetchAsks: Int { state.withLock { $0.fetchAsks } }
    var takes: Int { state.withLock { $0.takes } }
    var releasesStarted: Int { state.withLock { $0.releasesStarted } }
    var releases: Int { state.withLock { $0.releases } }
    /// "take" (granted) and "release" (done), in order.
    var events: [String] { state.withLock { $0.events } }

    /// The load lease over these.
    var loadLease: PostsLoadLease {
        PostsLoadLease(take: { [self] in take() }, release: { [self] in await release() }, lifetime: lifetime)
    }

    func fetch() -> Bool {
        state.withLock { state in
            state.fetchAsks += 1
            return state.fetchIsMine
        }
    }

    func take() -> LeaseTake {
        state.withLock { state in
            state.takes += 1
            guard state.loadIsMine else { return .refused }
            state.events.append("take")
            return state.holderDied ? .takenOver : .taken
        }
    }

    func release() async {
        state.withLock { $0.releasesStarted += 1 }
        while holdReleases { try? await Task.sleep(for: .milliseconds(5)) }
        state.withLock { state in
            state.releases += 1
            state.events.append("release")
        }
    }
}
