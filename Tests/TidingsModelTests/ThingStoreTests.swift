import OpenCombine
import XCTest
import Observing
@testable import TidingsModel

/// Idea 8: the thing store and every rule, each with its own error.
@MainActor
final class ThingStoreTests: XCTestCase {
    func testNormalisationTrimsAndUpperCasesUnicodeAware() async throws {
        let store = ThingStore<Never>()
        XCTAssertEqual(try store.add("  straße\n"), "STRASSE")
        XCTAssertEqual(try store.add("\tyolo "), "YOLO")
        XCTAssertEqual(try store.add("ǆ"), "Ǆ")
        XCTAssertEqual(store.things, ["STRASSE", "YOLO", "Ǆ"], "insertion order")
        XCTAssertEqual(ThingRules.normalize("istanbul", textCase: .upper), "ISTANBUL", "no Turkish dotted İ: locale-independent")
        XCTAssertEqual(ThingRules.normalize(" Btw ", textCase: .none), "Btw")
    }

    func testEachRuleHasItsOwnError() async {
        let store = ThingStore<Never>(["YOLO"])
        XCTAssertThrowsError(try store.add("   ")) { XCTAssertEqual($0 as? ThingError, .empty) }
        XCTAssertThrowsError(try store.add(String(repeating: "a", count: 65))) {
            XCTAssertEqual($0 as? ThingError, .tooLong(length: 65, limit: 64))
        }
        XCTAssertNoThrow(try store.add(String(repeating: "a", count: 64)))
        XCTAssertThrowsError(try store.add("a\u{7}b")) { XCTAssertEqual($0 as? ThingError, .controlCharacters) }
        XCTAssertThrowsError(try store.add("a\nb")) { XCTAssertEqual($0 as? ThingError, .controlCharacters) }
        XCTAssertThrowsError(try store.add(" yolo ")) { XCTAssertEqual($0 as? ThingError, .duplicate("YOLO")) }
        XCTAssertThrowsError(try store.remove("nope")) { XCTAssertEqual($0 as? ThingError, .notFound("NOPE")) }
        XCTAssertEqual(store.things.count, 2)
    }

    func testLengthIsCheckedAfterNormalisation() async {
        // 32 × "ß" is 32 characters typed but 64 after upper-casing ("SS"): allowed; 33 is not.
        XCTAssertEqual(try ThingRules.validateAdd(String(repeating: "ß", count: 32), to: [String](), textCase: .upper).count, 64)
        XCTAssertThrowsError(try ThingRules.validateAdd(String(repeating: "ß", count: 33), to: [String](), textCase: .upper)) {
            XCTAssertEqual($0 as? ThingError, .tooLong(length: 66, limit: 64))
        }
    }

    func testAtMostTenThousandThings() async throws {
        let full = (0..<ThingRules.maxCount).map { "T\($0)" }
        let store = ThingStore<Never>(full)
        XCTAssertThrowsError(try store.add("one more")) { XCTAssertEqual($0 as? ThingError, .tooMany(limit: 10_000)) }
        XCTAssertThrowsError(try store.add("T5")) { XCTAssertEqual($0 as? ThingError, .duplicate("T5")) }
        XCTAssertThrowsError(try ThingStore<Never>().replaceAll(full + ["x"])) { XCTAssertEqual($0 as? ThingError, .tooMany(limit: 10_000)) }
        XCTAssertEqual(try ThingStore<Never>().replaceAll(full).count, 10_000)
    }

    func testReplaceAllIsAtomicOnDuplicatesAfterNormalisation() async throws {
        let store = ThingStore<Never>(["OLD"])
        var changes: [ThingChange] = []
        let c = store.changes.sink { changes.append($0) }
        XCTAssertThrowsError(try store.replaceAll(["lol", "brb", " LOL "])) { XCTAssertEqual($0 as? ThingError, .duplicate("LOL")) }
        XCTAssertThrowsError(try store.replaceAll(["ok", ""])) { XCTAssertEqual($0 as? ThingError, .empty) }
        XCTAssertEqual(store.things, ["OLD"], "nothing applied")
        XCTAssertEqual(changes, [])
        XCTAssertEqual(try store.replaceAll(["lol", "brb"]), ["LOL", "BRB"])
        XCTAssertEqual(store.things, ["LOL", "BRB"])
        XCTAssertFalse(store.contains("OLD"), "the old list is gone")
        XCTAssertEqual(changes, [.replace])
        c.cancel()
    }

    func testAddRemoveAndPublishedList() async throws {
        let store = ThingStore<Never>()
        var lists: [[String]] = []
        var changes: [ThingChange] = []
        let a = store.$things.sink { lists.append($0) }
        let b = store.changes.sink { changes.append($0) }
        try store.add("yolo")
        try store.add("btw")
        XCTAssertEqual(try store.remove("Yolo"), "YOLO")
        XCTAssertEqual(lists, [[], ["YOLO"], ["YOLO", "BTW"], ["BTW"]])
        XCTAssertEqual(changes, [.add("YOLO"), .add("BTW"), .remove("YOLO")])
        XCTAssertTrue(store.contains("BTW"))
        XCTAssertFalse(store.contains("YOLO"))
        _ = (a, b)
    }

    func testOverridingTheTextCaseOfAThingStoreInATest() async throws {
        let upper = ThingStore<Never>()
        let asTyped = ThingStore<Never>()
        asTyped.environment.textCase = .none
        XCTAssertEqual(try upper.add("yolo"), "YOLO")
        XCTAssertEqual(try asTyped.add("yolo"), "yolo")
        XCTAssertEqual(EnvironmentValues().textCase, .upper, "the default")
    }

    func testPureRulesValidateABatchAgainstAShadowCopy() async throws {
        var shadow = ["YOLO"]
        shadow.append(try ThingRules.validateAdd("afk", to: shadow, textCase: .upper))
        XCTAssertThrowsError(try ThingRules.validateAdd("AFK", to: shadow, textCase: .upper)) {
            XCTAssertEqual($0 as? ThingError, .duplicate("AFK"))
        }
        XCTAssertEqual(shadow, ["YOLO", "AFK"])
    }
}

/// The server's path: rules checked against a shadow copy, then trusted edits applied.
@MainActor
final class ThingStoreApplyTests: XCTestCase {
    func testApplyingValidatedEdits() async throws {
        let store = ThingStore<Never>(["YOLO"])
        var changes: [ThingChange] = []
        let c = store.changes.sink { changes.append($0) }
        var shadow = Set(store.things)
        let thing = try ThingRules.validateAdd(" afk", to: shadow, textCase: .upper)
        shadow.insert(thing)
        XCTAssertTrue(store.apply(.add(thing)))
        XCTAssertFalse(store.apply(.add(thing)), "already present: nothing happens")
        XCTAssertFalse(store.apply(.remove("NOPE")))
        XCTAssertFalse(store.apply(.replaceAll(["A", "A"])))
        XCTAssertTrue(store.apply(.remove("YOLO")))
        XCTAssertEqual(store.things, ["AFK"])
        XCTAssertEqual(changes, [.add("AFK"), .remove("YOLO")])
        c.cancel()
    }
}
