import EventHTTP
import Foundation
import HTTPTypes
import Logging
@testable import Observing
import OpenCombine
import TidingsStore
import XCTest
@testable import TidingsAPI

/// One typed change (issue #25): a write's value is decoded from the request once and checked
/// once, and comes back from the store typed — nothing on its way through the commit, the
/// change feed, memory and the subjects decodes or checks it again; another writer's change is
/// decoded and checked once, where it comes in; the subjects carry the server's payload typed.
/// In-process: the real application over SQLite in a temporary directory, no socket.
@MainActor
final class OneTypedChangeTests: XCTestCase {
    private var directory: URL!
    private var app: TidingsApplication!
    private var cancellables: [AnyCancellable] = []

    override func setUp() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("typed-\(UUID().uuidString)")
        var configuration = TidingsConfiguration()
        configuration.dataDir = directory.path
        configuration.apiTokens = ["write-secret"]
        configuration.feedRefresh = 0
        app = try TidingsApplication(configuration: configuration, loop: try EventLoop())
        // A first write, so the feed's start-up read is behind us before anything is counted.
        let warmUp = try await response(.put, "/preferences/numberOfItems", body: #"{"value":1}"#)
        XCTAssertEqual(warmUp.status, .ok)
    }

    override func tearDown() async throws {
        cancellables = []
        app = nil
        try? FileManager.default.removeItem(at: directory)
    }

    private var state: TidingsState { app.resources.state }

    private func response(_ method: HTTPRequest.Method, _ target: String, body: String? = nil) async throws -> Response {
        var headers: HTTPFields = [.authorization: "Bearer write-secret"]
        if body != nil { headers[.contentType] = "application/json" }
        let answer = await app.router.respond(to: Request(method: method, target: target, headers: headers,
                                                          body: Array((body ?? "").utf8)))
        return try XCTUnwrap(answer.response)
    }

    /// Values decoded from JSON and values checked against a declaration during `body`.
    private func work(_ body: () async throws -> Void) async rethrows -> (decodes: Int, checks: Int) {
        let before = ValueWork.counts
        try await body()
        let after = ValueWork.counts
        return (after.decodes - before.decodes, after.checks - before.checks)
    }

    func testAPatchDecodesEachValueOnceAndChecksItOnce() async throws {
        let cost = try await work {
            let patched = try await response(.patch, "/preferences", body: #"{"age":7,"name":"Ann","speed":2}"#)
            XCTAssertEqual(patched.status, .ok)
        }
        XCTAssertEqual(cost.decodes, 3, "three values, each decoded from the body once (before: 9, twice more from the stored JSON)")
        XCTAssertEqual(cost.checks, 3, "three values, each checked once (before: 9)")
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(7))
        XCTAssertEqual(state.preferences.value(forKey: "name"), .string("Ann"))
        XCTAssertEqual(state.preferences.value(forKey: "speed"), .number(2), "typed by its declaration: a number")
        XCTAssertEqual(state.revision(ofPreference: "speed"), state.revision)
    }

    func testAPutDecodesItsValueOnceAndChecksItOnce() async throws {
        var put: Response?
        let cost = try await work { put = try await response(.put, "/preferences/age", body: #"{"value":8}"#) }
        XCTAssertEqual(put?.status, .ok)
        let record = try JSONSerialization.jsonObject(with: Data(try XCTUnwrap(put).body)) as? [String: Any]
        XCTAssertEqual(record?["value"] as? Int, 8, "the answer shows the value the write gave the key")
        XCTAssertEqual(cost.decodes, 1)
        XCTAssertEqual(cost.checks, 1)
        let refused = try await work {
            let put = try await response(.put, "/preferences/age", body: #"{"value":1.5}"#)
            XCTAssertEqual(put.status, .unprocessableContent)
        }
        XCTAssertEqual(refused.checks, 1, "a refused value is checked once too")
    }

    func testAnotherWritersChangeIsDecodedAndCheckedOnceWhereItComesIn() async throws {
        let next = state.revision + 1
        let feed = ChangeFeed(store: app.resources.store, state: state, logger: Logger(label: "test"))
        let cost = await work {
            feed.deliver([Change(revision: next, kind: .preference(key: "age", json: "12"))])
        }
        XCTAssertEqual(state.revision, next)
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(12))
        XCTAssertEqual(cost.decodes, 1)
        XCTAssertEqual(cost.checks, 1)
        // Outside input is still checked: a value that does not fit reads as the default.
        feed.deliver([Change(revision: next + 1, kind: .preference(key: "age", json: "1.5"))])
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(5))
    }

    func testARollbackChecksEachPastValueOnce() async throws {
        let first = try await response(.put, "/preferences/age", body: #"{"value":7}"#)
        XCTAssertEqual(first.status, .ok)
        let target = state.revision
        let second = try await response(.put, "/preferences/age", body: #"{"value":8}"#)
        XCTAssertEqual(second.status, .ok)
        let cost = try await work {
            let rolledBack = try await response(.post, "/preferences/rollback", body: #"{"revision":\#(target),"keys":["age"]}"#)
            XCTAssertEqual(rolledBack.status, .ok)
        }
        XCTAssertEqual(state.preferences.value(forKey: "age"), .integer(7))
        XCTAssertEqual(cost.decodes, 1, "the past value, decoded from the history once")
        XCTAssertEqual(cost.checks, 1, "and checked once (before: twice, again when applied)")
    }

    func testSubjectsCarryTheEncodedEventTyped() async throws {
        var preferenceEvents: [JournalEntry] = []
        var thingEvents: [JournalEntry] = []
        state.preferences.changes(forKey: "age")!.dropFirst()
            .sink { preferenceEvents += $0.payload.map { [$0] } ?? [] }.store(in: &cancellables)
        state.things.updates.sink { thingEvents += $0.payload.map { [$0] } ?? [] }.store(in: &cancellables)
        let put = try await response(.put, "/preferences/age", body: #"{"value":9}"#)
        XCTAssertEqual(put.status, .ok)
        let added = try await response(.post, "/things", body: #"{"thing":"yolo"}"#)
        XCTAssertEqual(added.status, .created)

        let journal = try XCTUnwrap(state.journal.entries(after: state.revision - 2, current: state.revision) { _ in true })
        XCTAssertEqual(preferenceEvents.map(\.revision), [state.revision - 1])
        XCTAssertEqual(preferenceEvents.first?.topic, .preference("age"))
        XCTAssertEqual(preferenceEvents.first?.frame, journal.first?.frame, "the same bytes the journal replays")
        XCTAssertEqual(thingEvents.map(\.revision), [state.revision])
        XCTAssertEqual(thingEvents.first?.frame, journal.last?.frame)
    }
}
