import Foundation
import OpenCombine
import XCTest
@testable import Observing
import TestFixtures

/// Idea 7: the data loader — one load however many callers, failures keep the last good
/// value, cancel, conditional requests, back-off.
@MainActor
final class DataLoaderTests: XCTestCase {
    private let url = URL(string: "http://upstream.test/posts")!

    private func makeLoader(
        _ steps: [ScriptedUpstream.Step], policy: DataLoaderPolicy = DataLoaderPolicy(retryBase: nil),
        sleeper: ScriptedSleeper = ScriptedSleeper(immediate: 0)
    ) -> (DataLoader<[Int]>, ScriptedUpstream) {
        let upstream = ScriptedUpstream(steps)
        var environment = EnvironmentValues()
        environment.httpClient = ScriptedClient(upstream: upstream)
        environment.sleeper = sleeper
        return (DataLoader<[Int]>(request: HTTPClientRequest(url: url), environment: environment, policy: policy), upstream)
    }

    func testHundredConcurrentFetchesStartExactlyOneLoad() async {
        let (loader, upstream) = makeLoader([.respond(ok("[1,2,3]"))])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask { @MainActor in loader.fetchDataIfNeeded() }
            }
        }
        let state = await loader.settled()
        XCTAssertEqual(state.phase, .loaded)
        XCTAssertEqual(state.value, [1, 2, 3])
        let requests = await upstream.requestCount
        XCTAssertEqual(requests, 1)
        loader.fetchDataIfNeeded()  // once loaded: nothing
        XCTAssertFalse(loader.isFetching)
        XCTAssertEqual(loader.requestCount, 1)
    }

    func testStatesIdleLoadingLoaded() async {
        let (loader, _) = makeLoader([.respond(ok("[1]"))])
        var phases: [LoadPhase] = []
        let c = loader.$state.sink { phases.append($0.phase) }
        loader.fetchDataIfNeeded()
        _ = await loader.settled()
        XCTAssertEqual(phases, [.idle, .loading, .loaded])
        c.cancel()
    }

    func testFailureKeepsTheLastGoodValueAndSaysWhy() async {
        let (loader, _) = makeLoader([
            .respond(ok("[7]")),
            .respond(HTTPClientResponse(status: 503)),
            .fail(.connectionFailed("refused")),
            .fail(.timedOut),
            .respond(ok("not json")),
            .respond(ok("[1,2,3,4,5,6,7,8,9,10,11]")),
        ], policy: DataLoaderPolicy(maxBodyBytes: 16, retryBase: nil))
        loader.fetchDataIfNeeded()
        let first = await loader.settled()
        let expected: [DataLoaderError] = [
            .unexpectedStatus(503), .connectionFailed("refused"), .timedOut(after: .seconds(10)),
            .notDecodable("The given data was not valid JSON. at the top level"), .bodyTooLarge(limit: 16),
        ]
        for error in expected {
            loader.refresh()
            let state = await loader.settled()
            XCTAssertEqual(state.phase, .failed)
            XCTAssertEqual(state.value, [7], "last good value kept")
            XCTAssertEqual(state.lastGood?.fetchedAt, first.lastGood?.fetchedAt)
            XCTAssertEqual(state.error?.phaseInsensitiveKind, error.phaseInsensitiveKind)
        }
        XCTAssertEqual(DataLoaderError.unexpectedStatus(503).upstreamStatus, 503)
    }

    func testTimeoutAbandonsAHangingUpstream() async {
        let (loader, _) = makeLoader([.hang], policy: DataLoaderPolicy(timeout: .milliseconds(50), retryBase: nil))
        loader.fetchDataIfNeeded()
        let state = await loader.settled()
        XCTAssertEqual(state.error, .timedOut(after: .milliseconds(50)))
        XCTAssertEqual(state.phase, .failed)
    }

    func testCancelReturnsToIdleOrThePreviousValue() async {
        let (loader, upstream) = makeLoader([.hang, .respond(ok("[1]")), .hang])
        loader.fetchDataIfNeeded()
        XCTAssertEqual(loader.state.phase, .loading)
        // Cancel once the load is at the upstream, so the script's steps meet the loads in order
        // (a load cancelled before it asked would leave its `.hang` to the next one).
        await waitUntilUpstream(upstream, hasSeen: 1)
        XCTAssertTrue(loader.cancel())
        XCTAssertEqual(loader.state.phase, .idle)
        XCTAssertFalse(loader.cancel(), "nothing running")
        loader.fetchDataIfNeeded()
        let loaded = await loader.settled()
        XCTAssertEqual(loaded.value, [1])
        loader.refresh()
        XCTAssertEqual(loader.state.phase, .loading)
        await waitUntilUpstream(upstream, hasSeen: 3)
        XCTAssertTrue(loader.cancel())
        XCTAssertEqual(loader.state.phase, .loaded)
        XCTAssertEqual(loader.state.value, [1])
        XCTAssertEqual(loader.requestCount, 3, "three loads were started")
        let requests = await upstream.requestCount
        XCTAssertLessThanOrEqual(requests, 3, "a load cancelled before it ran never reaches the upstream")
    }

    func testQuietRefreshAnnouncesOnlyADifferentOutcome() async {
        let (loader, _) = makeLoader([.respond(ok("[1]", headers: ["ETag": "\"a\""])), .respond(HTTPClientResponse(status: 304)), .respond(ok("[2]"))])
        loader.fetchDataIfNeeded()
        _ = await loader.settled()
        var phases: [LoadPhase] = []
        let c = loader.$state.dropFirst().sink { phases.append($0.phase) }
        loader.refresh(showingLoading: false)
        XCTAssertTrue(loader.isFetching)
        _ = await loader.settled()
        XCTAssertEqual(phases, [], "a quiet refresh answered 304 announces nothing")
        loader.refresh(showingLoading: false)
        let state = await loader.settled()
        XCTAssertEqual(phases, [.loaded])
        XCTAssertEqual(state.value, [2])
        c.cancel()
    }

    func testRefreshJoinsARunningLoad() async {
        let (loader, upstream) = makeLoader([.respond(ok("[1]"))])
        loader.fetchDataIfNeeded()
        loader.refresh()
        loader.refresh()
        _ = await loader.settled()
        let requests = await upstream.requestCount
        XCTAssertEqual(requests, 1)
    }

    func testConditionalRequestAnd304EmitNothing() async {
        let sleeper = ScriptedSleeper(immediate: 2)
        let (loader, upstream) = makeLoader([
            .respond(ok("[1]", headers: ["ETag": "\"v1\"", "Last-Modified": "Sun, 22 Nov 2026 05:00:00 GMT"])),
            .respond(HTTPClientResponse(status: 304)),
            .respond(ok("[1]")),  // identical body: nothing new either
            .hang,
        ], policy: DataLoaderPolicy(retryBase: nil, refreshInterval: .seconds(300)), sleeper: sleeper)
        var emissions = 0
        let c = loader.$state.dropFirst().sink { _ in emissions += 1 }
        loader.fetchDataIfNeeded()
        var delays = sleeper.delays.makeAsyncIterator()
        for _ in 0..<3 { _ = await delays.next() }  // after load, after 304, after identical body
        XCTAssertEqual(emissions, 2, "loading, loaded; then nothing for the 304 and the identical body")
        let requests = await upstream.requests
        XCTAssertEqual(requests.count, 3)
        XCTAssertNil(requests[0].headers["If-None-Match"])
        XCTAssertEqual(requests[1].headers["If-None-Match"], "\"v1\"")
        XCTAssertEqual(requests[1].headers["If-Modified-Since"], "Sun, 22 Nov 2026 05:00:00 GMT")
        XCTAssertEqual(loader.state.value, [1])
        c.cancel()
    }

    func testRetriesBackOffExponentiallyUpToTheCapAndAnnounceTheFailureOnce() async {
        let sleeper = ScriptedSleeper(immediate: 7)
        let (loader, upstream) = makeLoader([.respond(HTTPClientResponse(status: 500))],
                                            policy: DataLoaderPolicy(retryBase: .seconds(1)), sleeper: sleeper)
        var phases: [LoadPhase] = []
        let c = loader.$state.sink { phases.append($0.phase) }
        loader.fetchDataIfNeeded()
        var seen: [Duration] = []
        for await delay in sleeper.delays {
            seen.append(delay)
            if seen.count == 8 { break }
        }
        XCTAssertEqual(seen, [1, 2, 4, 8, 16, 32, 60, 60].map { Duration.seconds($0) })
        let requests = await upstream.requestCount
        XCTAssertEqual(requests, 8)
        XCTAssertEqual(phases, [.idle, .loading, .failed], "repeated identical failures are announced once")
        c.cancel()
    }

    func testRecoveryAfterFailureResetsBackOff() async {
        let sleeper = ScriptedSleeper(immediate: 1)
        let (loader, _) = makeLoader([.respond(HTTPClientResponse(status: 502)), .respond(ok("[3]")), .hang],
                                     policy: DataLoaderPolicy(retryBase: .milliseconds(500)), sleeper: sleeper)
        loader.fetchDataIfNeeded()
        var delays = sleeper.delays.makeAsyncIterator()
        let first = await delays.next()
        XCTAssertEqual(first, .milliseconds(500))
        let recovered = await state(of: loader) { $0.phase == .loaded }  // the retry succeeded
        XCTAssertEqual(recovered.value, [3])
        XCTAssertNil(recovered.error)
    }

    func testDecodingIsAClosureNotPostsSpecific() async {
        let upstream = ScriptedUpstream([.respond(ok("hello"))])
        var environment = EnvironmentValues()
        environment.httpClient = ScriptedClient(upstream: upstream)
        let loader = DataLoader<Int>(request: HTTPClientRequest(url: url), environment: environment) { $0.count }
        loader.fetchDataIfNeeded()
        let state = await loader.settled()
        XCTAssertEqual(state.value, 5)
    }

    /// Polls (with a deadline) until the scripted upstream received `count` requests.
    private func waitUntilUpstream(_ upstream: ScriptedUpstream, hasSeen count: Int,
                                   file: StaticString = #filePath, line: UInt = #line) async {
        if await !eventually(within: 10, every: 0.001, { await upstream.requestCount >= count }) {
            XCTFail("the upstream never saw \(count) requests", file: file, line: line)
        }
    }
}

extension DataLoaderError {
    /// The case without its payload detail (messages from Foundation may vary by version).
    fileprivate var phaseInsensitiveKind: String {
        switch self {
        case .connectionFailed: "connection"
        case .timedOut: "timeout"
        case let .unexpectedStatus(s): "status \(s)"
        case let .bodyTooLarge(l): "too large \(l)"
        case .notDecodable: "not decodable"
        case .refused: "refused"
        }
    }
}
