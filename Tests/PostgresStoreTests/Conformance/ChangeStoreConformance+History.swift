import Foundation
import XCTest
@testable import TidingsStore

/// The change table as every instance reads it: ``ChangeStore/changes(after:limit:)``, pruning
/// by ``ChangeStoreLimits`` with its floors, ``ChangeStore/recentChanges(maxCount:maxBytes:)``
/// and the history records (``HistoryStore``).
extension ChangeStoreConformance {
    /// Pages after a revision, oldest first, at most `limit`; nothing after the newest;
    /// ``StoreError/changesPruned(oldestAvailable:)`` after a revision the store never reached.
    static func changesAfterPageInOrder(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        var committed: [Change] = []
        for value in 1...7 { committed += try await store.commit([set("k\(value % 3)", "\(value)")]) }
        var page = try await store.changes(after: 0, limit: 3)
        XCTAssertEqual(page, Array(committed[0..<3]))
        page = try await store.changes(after: 3, limit: 3)
        XCTAssertEqual(page, Array(committed[3..<6]))
        page = try await store.changes(after: 6, limit: 3)
        XCTAssertEqual(page, [committed[6]])
        page = try await store.changes(after: 7, limit: 3)
        XCTAssertEqual(page, [])
        page = try await store.changes(after: 2, limit: 0)
        XCTAssertEqual(page, [], "limit 0")
        // A reader ahead of the counter (the database went back: a restore, a failover that
        // lost commits) must reload, as a reader behind the pruned rows must.
        var error = await storeError { try await store.changes(after: 100, limit: 3) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 8))
        error = await storeError { try await store.changes(after: UInt64.max, limit: 3) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 8), "beyond any stored revision")
    }

    /// `historyCount` and `historyBytes` bound the table; a reader behind the oldest row is
    /// told ``StoreError/changesPruned(oldestAvailable:)``.
    static func pruningByCountAndBytes(_ maker: some ChangeStoreMaker) async throws {
        let byCount = try await maker.freshStore(limits: ChangeStoreLimits(historyCount: 5, historyBytes: 1 << 20))
        for value in 1...10 { _ = try await byCount.commit([set("k", "\(value)")]) }
        var error = await storeError { try await byCount.changes(after: 0, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 6))
        error = await storeError { try await byCount.changes(after: 4, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 6))
        var kept = try await byCount.changes(after: 5, limit: 100)
        XCTAssertEqual(kept.map(\.revision), [6, 7, 8, 9, 10])
        kept = try await byCount.recentChanges(maxCount: 100, maxBytes: 1 << 20)
        XCTAssertEqual(kept.map(\.revision), [6, 7, 8, 9, 10])

        // Each change of key "k" to a 3-byte value costs 32 + 1 + 3, plus 3 for the value it
        // replaced (all but the first): 39.
        let byBytes = try await maker.freshStore(limits: ChangeStoreLimits(historyCount: 1_000, historyBytes: 39 * 3 + 10))
        for value in 100...107 { _ = try await byBytes.commit([set("k", "\(value)")]) }
        kept = try await byBytes.changes(after: 5, limit: 100)
        XCTAssertEqual(kept.map(\.revision), [6, 7, 8])
        XCTAssertEqual(kept.map(\.byteCount), [39, 39, 39])
        error = await storeError { try await byBytes.changes(after: 4, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 6))
        // A change bigger than the whole budget is not kept either.
        _ = try await byBytes.commit([.setPosts(String(repeating: "x", count: 500))])
        error = await storeError { try await byBytes.changes(after: 8, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 10))
        kept = try await byBytes.changes(after: 9, limit: 100)
        XCTAssertEqual(kept, [], "the reader at the newest revision is not behind")
        let snapshot = try await byBytes.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 9, "pruning never loses the state")
    }

    /// `keepCount` within `keepBytes`: the newest rows kept whatever the upper bounds say, but
    /// only while the whole kept window fits in `keepBytes`.
    static func pruningKeepsTheReplayFloor(_ maker: some ChangeStoreMaker) async throws {
        let floor = try await maker.freshStore(limits: ChangeStoreLimits(historyCount: 2, keepCount: 4, keepBytes: 1 << 20))
        for value in 1...10 { _ = try await floor.commit([set("k", "\(value)")]) }
        var error = await storeError { try await floor.changes(after: 5, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 7))
        var kept = try await floor.changes(after: 6, limit: 100)
        XCTAssertEqual(kept.map(\.revision), [7, 8, 9, 10], "four kept, though the bound is two")

        // Rows of "k" to 3-byte values cost 39: a floor of four rows does not fit in 100 bytes.
        let tight = try await maker.freshStore(limits: ChangeStoreLimits(historyCount: 2, keepCount: 4, keepBytes: 100))
        for value in 100...109 { _ = try await tight.commit([set("k", "\(value)")]) }
        error = await storeError { try await tight.changes(after: 7, limit: 100) }
        XCTAssertEqual(error, .changesPruned(oldestAvailable: 9))
        kept = try await tight.changes(after: 8, limit: 100)
        XCTAssertEqual(kept.map(\.revision), [9, 10], "the floor does not fit its bytes: the upper bound holds")
    }

    /// The newest retained changes, oldest first, within both bounds.
    static func recentChangesAreBoundedByCountAndBytes(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        var committed: [Change] = []
        for value in 1...6 { committed += try await store.commit([set("k", "\(value)")]) }
        committed += try await store.commit([.setPosts(String(repeating: "p", count: 100))])
        var recent = try await store.recentChanges(maxCount: 3, maxBytes: 1 << 20)
        XCTAssertEqual(recent, Array(committed.suffix(3)))
        recent = try await store.recentChanges(maxCount: 100, maxBytes: 1 << 20)
        XCTAssertEqual(recent, committed)
        let last = committed[6].byteCount, previous = committed[5].byteCount
        recent = try await store.recentChanges(maxCount: 100, maxBytes: last)
        XCTAssertEqual(recent, [committed[6]], "exactly the newest one's bytes")
        recent = try await store.recentChanges(maxCount: 100, maxBytes: last + previous - 1)
        XCTAssertEqual(recent, [committed[6]], "one byte short of two")
        recent = try await store.recentChanges(maxCount: 100, maxBytes: last + previous)
        XCTAssertEqual(recent, Array(committed.suffix(2)))
        recent = try await store.recentChanges(maxCount: 100, maxBytes: last - 1)
        XCTAssertEqual(recent, [], "the newest one alone is too big")
        recent = try await store.recentChanges(maxCount: 0, maxBytes: 1 << 20)
        XCTAssertEqual(recent, [])
    }

    /// A page bounded by bytes stops after the record that brings it to the bound, whatever
    /// `limit` says, both ways; walking pages reads every record once (no quadratic re-reads).
    static func historyPagesAreBoundedByBytes(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        // Records of about 20 KB (value and the value it replaced), and small ones between.
        var committed: [Change] = []
        for n in 1...24 {
            let value = n % 3 == 0 ? "\(n)" : "\"" + String(repeating: Character(UnicodeScalar(UInt8(97 + n % 26))), count: 10_000) + "\""
            committed += try await store.commit([set("k\(n % 2)", value)])
        }
        let bound = 50_000
        func expectedCount(_ records: ArraySlice<Change>) -> Int {
            var total = 0
            for (index, change) in records.enumerated() {
                if total >= bound { return index }
                total += change.byteCount
            }
            return records.count
        }
        let newest = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 1_000, maxBytes: bound))
        let reversed = ArraySlice(committed.reversed())
        XCTAssertEqual(newest.map(\.revision), reversed.prefix(expectedCount(reversed)).map(\.revision))
        XCTAssertLessThan(newest.count, committed.count, "the bound cut the page")
        XCTAssertGreaterThanOrEqual(newest.reduce(0) { $0 + $1.byteCount }, bound)
        XCTAssertLessThan(newest.dropLast().reduce(0) { $0 + $1.byteCount }, bound, "it stops at the record that reaches the bound")
        // Walking forwards by pages reads each record exactly once.
        var walked: [UInt64] = []
        var after: UInt64 = 0
        while true {
            let page = try await store.history(HistoryQuery(direction: .oldestFirst(after: after), limit: 1_000, maxBytes: bound))
            guard let last = page.last else { break }
            XCTAssertEqual(page.map(\.revision), Array(committed.filter { $0.revision > after }.map(\.revision)
                .prefix(expectedCount(ArraySlice(committed.filter { $0.revision > after })))))
            walked += page.map(\.revision)
            after = last.revision
        }
        XCTAssertEqual(walked, committed.map(\.revision))
        // A record bigger than the bound alone is a page of its own.
        let one = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 10, maxBytes: 100))
        XCTAssertEqual(one.map(\.revision), [committed.last!.revision])
    }

    /// Records say who and why (per write), what they replaced, and when (never earlier than
    /// the record before); pages read both ways; as-of reads the state at a revision.
    static func historyRecordsAgree(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        _ = try await store.commit([set("a", "1")], actor: "deploy-bot")
        let patch = try await store.commit([set("a", "2"), set("b", #""x""#), set("a", nil)], actor: "ops", reason: "incident 42")
        _ = try await store.commit([.addThing("X"), .replaceThings(["Y", "Z"]), .removeThing("Y")], actor: "api")
        _ = try await store.commit([.setPosts("{}")], actor: "feed")
        XCTAssertEqual(patch.map(\.revision), [2, 3, 4])
        XCTAssertEqual(Set(patch.map(\.at)).count, 1, "one write, one time")

        let records = try await store.history(HistoryQuery(direction: .oldestFirst(after: 0), limit: 100))
        XCTAssertEqual(records.map { Record($0) }, [
            Record(1, .preference(key: "a", json: "1"), "deploy-bot", nil, nil),
            Record(2, .preference(key: "a", json: "2"), "ops", "incident 42", "1"),
            Record(3, .preference(key: "b", json: #""x""#), "ops", "incident 42", nil),
            Record(4, .preference(key: "a", json: nil), "ops", "incident 42", "2"),
            Record(5, .things(op: .add, thing: "X", list: ["X"]), "api", nil, nil),
            Record(6, .things(op: .replace, thing: nil, list: ["Y", "Z"]), "api", nil, #"["X"]"#),
            Record(7, .things(op: .remove, thing: "Y", list: ["Z"]), "api", nil, nil),
        ], "posts changes are not records")
        XCTAssertEqual(records.map(\.at), records.map(\.at).sorted())
        XCTAssertTrue(records.allSatisfy { $0.at > 0 })
        let table = try await store.changes(after: 0, limit: 100)
        XCTAssertEqual(Array(table.prefix(7)), records, "a record is the change row every reader reads")

        let newest = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 2))
        XCTAssertEqual(newest.map(\.revision), [7, 6])
        let keyed = try await store.history(HistoryQuery(direction: .newestFirst(before: 4), limit: 10, things: false, keys: ["a"]))
        XCTAssertEqual(keyed.map(\.revision), [2, 1])
        let window = try await store.history(HistoryQuery(direction: .oldestFirst(after: 1), limit: 10, preferences: false, below: 7))
        XCTAssertEqual(window.map(\.revision), [5, 6])

        let asOf = try await store.state(asOf: .revision(3))
        XCTAssertEqual(asOf, HistoricalState(
            revision: 3, preferences: ["a": StoredPreference(json: "2", revision: 2), "b": StoredPreference(json: #""x""#, revision: 3)],
            things: [], thingsRevision: 0))
        let byTime = try await store.state(asOf: .time(patch[0].at))
        XCTAssertEqual(byTime.revision, 4, "the last revision committed at or before the time")
        let future = await storeError { try await store.state(asOf: .revision(9)) }
        XCTAssertEqual(future, .futureRevision(current: 8))
    }

    /// What a history record says, compared as a whole.
    struct Record: Hashable, CustomStringConvertible {
        var revision: UInt64, kind: Change.Kind, actor: String, reason: String?, before: String?
        init(_ revision: UInt64, _ kind: Change.Kind, _ actor: String, _ reason: String?, _ before: String?) {
            (self.revision, self.kind, self.actor, self.reason, self.before) = (revision, kind, actor, reason, before)
        }
        init(_ change: Change) { self.init(change.revision, change.kind, change.actor, change.reason, change.before) }
        var description: String { "\(revision) \(kind) by \(actor) (\(reason ?? "-")) before \(before ?? "nil")" }
    }
}
