import XCTest
import Observing
@testable import TidingsModel

/// Idea 3: the built-in set is declared once (wrappers) and the container lists it.
@MainActor
final class BuiltInPreferencesTests: XCTestCase {
    func testDeclarationsComeFromTheWrappersInOrder() async {
        let declarations = BuiltInPreferences().preferences.declarations
        XCTAssertEqual(declarations.map(\.key), [
            "should_show_hello_world", "onboardingCompleted", "promptedForProVersion", "name",
            "age", "readyForAction", "speed", "numberOfItems",
        ])
        XCTAssertEqual(declarations.map(\.type), [.boolean, .boolean, .boolean, .string, .integer, .boolean, .number, .integer])
        XCTAssertEqual(declarations.map(\.defaultValue), [
            .boolean(false), .boolean(false), .boolean(false), .string("fat"), .integer(5),
            .boolean(false), .number(0), .integer(0),
        ])
    }

    func testPropertiesReadAndWriteTheContainer() async throws {
        let store = InMemoryKeyValueStore(["name": .string("thin")])
        let builtIn = BuiltInPreferences(store: store)
        XCTAssertEqual(builtIn.name, "thin", "starts from the store")
        builtIn.age = 40
        XCTAssertEqual(builtIn.preferences.value(forKey: "age"), .integer(40))
        XCTAssertEqual(store.value(forKey: "age"), .integer(40), "written through")
        try builtIn.preferences.propose(PreferencePatch(values: ["speed": .integer(2)]))
        XCTAssertEqual(builtIn.speed, 2.0)
    }
}
