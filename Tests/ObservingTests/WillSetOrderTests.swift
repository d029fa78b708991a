import OpenCombine
import XCTest
@testable import Observing

/// Ideas 1 & 2: objectWillChange fires *before* the value changes.
@MainActor
final class WillSetOrderTests: XCTestCase {
    func testUserDefaultOwnerAnnouncesBeforeTheValueChanges() async throws {
        let builtIn = BuiltInPreferences()
        var seen: [Int] = []
        let c = builtIn.objectWillChange.sink { seen.append(builtIn.age) }
        builtIn.age = 6
        builtIn.age = 7
        XCTAssertEqual(seen, [5, 6], "each announcement must see the old value")
        XCTAssertEqual(builtIn.age, 7)
        c.cancel()
    }

    func testContainerAnnouncesOnceBeforeABatch() async throws {
        let prefs = TestPreferences().preferences
        var seen: [[PreferenceValue?]] = []
        let c = prefs.objectWillChange.sink { seen.append([prefs.value(forKey: "a"), prefs.value(forKey: "b")]) }
        try prefs.update(["a": .integer(1), "b": .integer(2)])
        XCTAssertEqual(seen, [[.integer(0), .integer(0)]])
        c.cancel()
    }

    func testThingStoreAnnouncesBeforeTheListChanges() async throws {
        let store = ThingStore()
        var seen: [[String]] = []
        let c = store.objectWillChange.sink { seen.append(store.things) }
        try store.add("yolo")
        try store.add("btw")
        XCTAssertEqual(seen, [[], ["YOLO"]])
        c.cancel()
    }
}
