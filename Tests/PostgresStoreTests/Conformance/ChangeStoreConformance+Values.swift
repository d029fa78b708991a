import Foundation
import XCTest
@testable import TidingsStore

/// What values the stores take and give back (``StoreWrite/unstorableReason``): every store
/// keeps a preference's JSON text byte for byte, `\u0000` escapes included, refuses text that
/// is not one JSON value, and refuses a raw U+0000 in any text of a write — with the same
/// error, nothing written, no revision taken.
extension ChangeStoreConformance {
    /// JSON text with escaped control characters (U+0000 among them), an escaped lone
    /// surrogate, a number beyond Double, white space around a value: stored and read back
    /// unchanged through every read (the commit's answer, the snapshot, the change table, the
    /// history, an as-of read).
    static func escapedTextRoundTripsByteForByte(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        let values = [
            #""a\u0000b""#, #""\u0001\t\u001f\u007f""#, #""\ud800""#, "1e400", #" [1, {"k": null}] "#, #""\\u0000""#,
        ]
        var committed: [Change] = []
        for (index, json) in values.enumerated() {
            committed += try await store.commit([set("k\(index)", json)], actor: "a", reason: "r")
        }
        XCTAssertEqual(committed.map(\.kind), values.enumerated().map { .preference(key: "k\($0)", json: $1) })

        let snapshot = try await store.loadSnapshot()
        for (index, json) in values.enumerated() {
            XCTAssertEqual(snapshot.preferences["k\(index)"]?.json.map { Array($0.utf8) }, Array(json.utf8), "k\(index)")
        }
        let table = try await store.changes(after: 0, limit: 100)
        XCTAssertEqual(table, committed)
        let records = try await store.history(HistoryQuery(direction: .oldestFirst(after: 0), limit: 100))
        XCTAssertEqual(records, committed)
        let asOf = try await store.state(asOf: .revision(UInt64(values.count)))
        XCTAssertEqual(asOf.preferences.mapValues(\.json), Dictionary(uniqueKeysWithValues: values.enumerated().map { ("k\($0)", $1) }))

        // And what it replaced, when the escaped value is overwritten.
        let next = try await store.commit([set("k0", "2")])
        let replaced = try await store.history(HistoryQuery(direction: .newestFirst(before: nil), limit: 1))
        XCTAssertEqual(replaced.first?.before, values[0])
        XCTAssertEqual(next.map(\.revision), [UInt64(values.count + 1)])
    }

    /// Text that is not one JSON value is refused as ``StoreError/invalidJSON(key:)``; a raw
    /// U+0000 in any text of a write as ``StoreError/unstorableText(_:)``. Each refused write
    /// leaves nothing behind; the next write takes the next revision.
    static func unstorableWritesAreRefusedAlike(_ maker: some ChangeStoreMaker) async throws {
        let store = try await maker.freshStore()
        _ = try await store.commit([set("k", "1")])
        let notJSON = ["{not json", "", " ", "01", "1.", "[1,]", #"{"a" 1}"#, #""a"#, "\"a\u{0}b\"", "\"tab\there\"",
                       #""\x""#, #""\u12""#, "1 2", "nul", "NaN", "+1", "'a'"]
        for json in notJSON {
            let error = await storeError { try await store.commit([set("k", "2"), set("k", json)]) }
            XCTAssertEqual(error, .invalidJSON(key: "k"), "\(json.debugDescription)")
        }
        let nul: [(StoreWrite, StoreError)] = [
            (StoreWrite([.addThing("a\u{0}b")]), .unstorableText("a thing")),
            (StoreWrite([.addThing("ok"), .replaceThings(["x", "\u{0}"])]), .unstorableText("a thing")),
            (StoreWrite([.removeThing("\u{0}")]), .unstorableText("a thing")),
            (StoreWrite([.setPosts("{\"t\": \"\u{0}\"}")]), .unstorableText("the posts document")),
            (StoreWrite([set("k\u{0}", "1")]), .unstorableText("a preference key")),
            (StoreWrite([set("k", "1", default: "\"\u{0}\"")]), .unstorableText("the default of k")),
            (StoreWrite([set("k", "3")], actor: "bot\u{0}"), .unstorableText("the actor")),
            (StoreWrite([set("k", "3")], reason: "why\u{0}"), .unstorableText("the reason")),
            (StoreWrite([set("k", "3")], expectedRevisions: ["k\u{0}": [1]]), .unstorableText("an If-Match key")),
        ]
        for (write, expected) in nul {
            let error = await storeError { try await store.commit(write) }
            XCTAssertEqual(error, expected, "\(write)")
        }
        let snapshot = try await store.loadSnapshot()
        XCTAssertEqual(snapshot.revision, 1, "no refused write took a revision")
        XCTAssertEqual(snapshot.things, [])
        let next = try await store.commit([set("k", "2")])
        XCTAssertEqual(next.map(\.revision), [2])
    }
}
