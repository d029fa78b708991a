import OpenCombine
import XCTest
@testable import Observing

@MainActor
private final class Synced: PreferencesBacked {
    @CloudStorage("theme") var theme = "dark"
    @CloudStorage("volume", minimum: 0, maximum: 10) var volume = 3
    let store: InMemoryKeyValueStore
    lazy var preferences = Preferences<Never>.declared(by: self, store: store)
    init(store: InMemoryKeyValueStore) { self.store = store }
}

/// Idea 5: changes made outside the process arrive on the same per-key subjects.
@MainActor
final class SyncedStoreTests: XCTestCase {
    func testExternalChangesArriveOnTheSamePerKeySubject() async {
        let store = InMemoryKeyValueStore()
        let synced = Synced(store: store)
        var themes: [PreferenceValue] = []
        var changed: [String] = []
        let a = synced.preferences.publisher(forKey: "theme")!.sink { themes.append($0) }
        let b = synced.preferences.changedKeys.sink { changed.append($0) }
        synced.theme = "light"  // local
        store.simulateExternalChange(["theme": .string("solar")])  // another process
        XCTAssertEqual(themes, [.string("dark"), .string("light"), .string("solar")])
        XCTAssertEqual(synced.theme, "solar")
        store.simulateExternalChange(["theme": nil])  // removed elsewhere: back to the default
        XCTAssertEqual(synced.theme, "dark")
        XCTAssertEqual(changed, ["theme", "theme", "theme"])
        _ = (a, b)
    }

    func testInvalidOrUnknownExternalValuesAreIgnored() async {
        let store = InMemoryKeyValueStore()
        let synced = Synced(store: store)
        var volumes: [PreferenceValue] = []
        let c = synced.preferences.publisher(forKey: "volume")!.sink { volumes.append($0) }
        store.simulateExternalChange(["volume": .integer(99), "unknown": .boolean(true)])
        store.simulateExternalChange(["volume": .string("loud")])
        store.simulateExternalChange(["volume": .integer(3)])  // equal to current: nothing
        XCTAssertEqual(volumes, [.integer(3)])
        c.cancel()
    }
}
