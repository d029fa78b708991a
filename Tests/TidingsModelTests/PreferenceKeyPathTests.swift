import OpenCombine
import XCTest
import Observing
@testable import TidingsModel

@MainActor
private final class Greeter: PreferencesReader {
    let preferenceSource: BuiltInPreferences
    @Preference(\BuiltInPreferences.name) var name
    @BuiltInPreference(\.age) var age

    init(_ source: BuiltInPreferences) {
        preferenceSource = source
    }
}

/// Idea 3: `@Preference(\.key)` — typed proxy, binding-like projection, that key's publisher only.
@MainActor
final class PreferenceKeyPathTests: XCTestCase {
    func testValueProxiesTheContainer() async throws {
        let source = BuiltInPreferences()
        let greeter = Greeter(source)
        XCTAssertEqual(greeter.name, "fat")
        greeter.name = "slim"
        XCTAssertEqual(source.preferences.value(forKey: "name"), .string("slim"))
        try source.preferences.propose(PreferencePatch(values: ["name": .string("round")]))
        XCTAssertEqual(greeter.name, "round")
    }

    func testProjectionIsABindingWithThatKeysPublisherAlone() async {
        let source = BuiltInPreferences()
        let greeter = Greeter(source)
        let binding = greeter.$age
        XCTAssertEqual(binding.key, "age")
        var received: [Int] = []
        let c = binding.publisher.sink { received.append($0) }
        binding.wrappedValue = 6
        source.name = "other"  // another key: must not reach this publisher
        source.age = 7
        XCTAssertEqual(received, [5, 6, 7])
        XCTAssertEqual(binding.wrappedValue, 7)
        XCTAssertEqual(greeter.$name.key, "name")
        c.cancel()
    }
}
