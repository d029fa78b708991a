import Foundation
import XCTest
@testable import TidingsStore

/// What a commit stores and answers: contiguous revisions in commit order, the changes in
/// order, the snapshot, and writes that change nothing.
extension ChangeStoreConformance {
    /// Every kind of operation; the answer, the snapshot and the change table agree, revisions
    /// run 1, 2, 3, ... without a gap.
    static func commitsTakeContiguousRevisionsInOrder(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        let empty = try await store.loadSnapshot()
        XCTAssertEqual(empty.withoutEnvironmentDetails, StoreSnapshot(revision: 0, preferences: [:], things: [], thingsRevision: 0, identity: empty.identity))
        XCTAssertNotNil(empty.identity, "every store has an identity from its creation")

        var committed: [Change] = []
        committed += try await store.commit([set("theme", #""dark""#), set("size", "12", default: "10")])
        committed += try await store.commit([.addThing("A"), .addThing("Ünïcødé ✓")])
        committed += try await store.commit([.removeThing("A")])
        committed += try await store.commit([.replaceThings(["X", "Y", "Z"])])
        committed += try await store.commit([set("theme", nil)])
        committed += try await store.commit([.setPosts(#"{"posts":[]}"#)])

        XCTAssertEqual(committed.map(\.revision), Array(1...8))
        XCTAssertEqual(committed.map(\.kind), [
            .preference(key: "theme", json: #""dark""#),
            .preference(key: "size", json: "12"),
            .things(op: .add, thing: "A", list: ["A"]),
            .things(op: .add, thing: "Ünïcødé ✓", list: ["A", "Ünïcødé ✓"]),
            .things(op: .remove, thing: "A", list: ["Ünïcødé ✓"]),
            .things(op: .replace, thing: nil, list: ["X", "Y", "Z"]),
            .preference(key: "theme", json: nil),
            .posts(#"{"posts":[]}"#),
        ])

        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.withoutEnvironmentDetails, StoreSnapshot(
            revision: 8,
            preferences: ["theme": StoredPreference(json: nil, revision: 7), "size": StoredPreference(json: "12", revision: 2)],
            things: ["X", "Y", "Z"], thingsRevision: 6,
            posts: StoredPosts(document: #"{"posts":[]}"#, revision: 8), identity: empty.identity))

        // The change table replays exactly what the commits answered.
        let table = try await store.changes(after: 0, limit: 100)
        XCTAssertEqual(table, committed)
    }

    /// A write that changes nothing takes no revision and leaves no change row: the declared
    /// default when nothing is stored, the stored value again, the same list in the same order,
    /// the same posts document, an empty write.
    static func writesThatChangeNothingTakeNoRevision(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        var answer = try await store.commit([set("size", "10", default: "10")])
        XCTAssertEqual(answer, [], "the default, never stored")
        answer = try await store.commit([set("size", nil, default: "10")])
        XCTAssertEqual(answer, [], "a reset of a key never set")
        answer = try await store.commit([])
        XCTAssertEqual(answer, [], "an empty write")

        answer = try await store.commit([set("size", "11", default: "10")])
        XCTAssertEqual(answer.map(\.revision), [1])
        answer = try await store.commit([set("size", "11", default: "10")])
        XCTAssertEqual(answer, [], "the same value again")
        answer = try await store.commit([set("size", nil, default: "10")])
        XCTAssertEqual(answer.map(\.revision), [2], "a reset of a stored value is a change")
        answer = try await store.commit([set("size", "10", default: "10")])
        XCTAssertEqual(answer, [], "the default after a reset")

        answer = try await store.commit([.replaceThings(["a", "b"])])
        XCTAssertEqual(answer.map(\.revision), [3])
        answer = try await store.commit([.replaceThings(["a", "b"])])
        XCTAssertEqual(answer, [], "the same list again")
        answer = try await store.commit([.replaceThings(["b", "a"])])
        XCTAssertEqual(answer.map(\.revision), [4], "another order is a change")

        answer = try await store.commit([.setPosts("[1]")])
        XCTAssertEqual(answer.map(\.revision), [5])
        answer = try await store.commit([.setPosts("[1]")])
        XCTAssertEqual(answer, [], "the same document again")

        // In one write: only the operations that change something take revisions.
        answer = try await store.commit([set("size", "11", default: "10"), set("size", "11", default: "10"), .setPosts("[1]")])
        XCTAssertEqual(answer.map(\.event), [Change(revision: 6, kind: .preference(key: "size", json: "11"))])

        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 6)
        let table = try await store.changes(after: 0, limit: 100)
        XCTAssertEqual(table.map(\.revision), Array(1...6))
    }

    /// Text compares as bytes in both stores (issue 22 item 12): "é" (U+00E9) and "e" + U+0301
    /// are canonically equivalent but different text, so replacing one by the other is a change
    /// in both, and storing the very same bytes again is none in both.
    static func canonicallyEquivalentTextIsComparedAsBytes(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        let composed = "\"caf\u{E9}\"", decomposed = "\"cafe\u{301}\""
        XCTAssertEqual(composed, decomposed, "Swift's String == is canonical equivalence")

        var answer = try await store.commit([set("name", composed)])
        XCTAssertEqual(answer.map(\.revision), [1])
        answer = try await store.commit([set("name", composed)])
        XCTAssertEqual(answer, [], "the same bytes again")
        answer = try await store.commit([set("name", decomposed)])
        XCTAssertEqual(answer.map(\.revision), [2], "other bytes are a change")
        XCTAssertEqual(answer.first.map { Array(($0.before ?? "").utf8) }, Array(composed.utf8))

        answer = try await store.commit([.setPosts(composed)])
        XCTAssertEqual(answer.map(\.revision), [3])
        answer = try await store.commit([.setPosts(decomposed)])
        XCTAssertEqual(answer.map(\.revision), [4], "another posts document")

        answer = try await store.commit([.replaceThings(["caf\u{E9}"])])
        XCTAssertEqual(answer.map(\.revision), [5])
        answer = try await store.commit([.replaceThings(["cafe\u{301}"])])
        XCTAssertEqual(answer.map(\.revision), [6], "another list")
        answer = try await store.commit([.addThing("caf\u{E9}")])
        XCTAssertEqual(answer.map(\.revision), [7], "another thing")
        answer = try await store.commit([.replaceThings(["cafe\u{301}", "caf\u{E9}"])])
        XCTAssertEqual(answer, [], "the list as it is, read back and written again")

        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.preferences["name"].map { Array(($0.json ?? "").utf8) }, Array(decomposed.utf8))
        XCTAssertEqual(snapshot.posts.map { Array($0.document.utf8) }, Array(decomposed.utf8))
        XCTAssertEqual(snapshot.things.map { Array($0.utf8) }, [Array("cafe\u{301}".utf8), Array("caf\u{E9}".utf8)])
        XCTAssertEqual(snapshot.revision, 7)
    }
}
