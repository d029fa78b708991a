import OpenCombine
import XCTest
@testable import Observing

/// Ideas 1 & 2: objectWillChange fires *before* the value changes.
@MainActor
final class WillSetOrderTests: XCTestCase {
    func testUserDefaultOwnerAnnouncesBeforeTheValueChanges() async throws {
        let owner = TestPreferences()
        var seen: [Int] = []
        let c = owner.preferences.objectWillChange.sink { seen.append(owner.a) }
        owner.a = 6
        owner.a = 7
        XCTAssertEqual(seen, [0, 6], "each announcement must see the old value")
        XCTAssertEqual(owner.a, 7)
        c.cancel()
    }

    func testContainerAnnouncesOnceBeforeABatch() async throws {
        let prefs = TestPreferences().preferences
        var seen: [[PreferenceValue?]] = []
        let c = prefs.objectWillChange.sink { seen.append([prefs.value(forKey: "a"), prefs.value(forKey: "b")]) }
        try prefs.propose(PreferencePatch(values: ["a": .integer(1), "b": .integer(2)]))
        XCTAssertEqual(seen, [[.integer(0), .integer(0)]])
        c.cancel()
    }

    func testThingStoreAnnouncesBeforeTheListChanges() async throws {
        let store = ThingStore<Never>()
        var seen: [[String]] = []
        let c = store.objectWillChange.sink { seen.append(store.things) }
        store.apply(.add("YOLO"))
        store.apply(.add("BTW"))
        XCTAssertEqual(seen, [[], ["YOLO"]])
        c.cancel()
    }
}
