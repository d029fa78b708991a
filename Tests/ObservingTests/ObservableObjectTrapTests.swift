import OpenCombine
import XCTest
@testable import Observing

/// Only our wrappers, no @Published, and no explicit publisher: OpenCombine's synthesised
/// objectWillChange finds nothing to install into and returns a fresh publisher each time.
@MainActor
private final class WithoutExplicitPublisher: ObservableObject, PreferencesBacked {
    @UserDefault("a") var a = 0
    lazy var preferences = Preferences<Never>.declared(by: self)
}

/// The same, with the publisher declared explicitly as the container's (as TidingsModel's
/// `BuiltInPreferences` does).
@MainActor
private final class WithExplicitPublisher: PreferencesBacked, @preconcurrency ObservableObject {
    @UserDefault("readyForAction") var readyForAction = false
    lazy var preferences = Preferences<Never>.declared(by: self)
    var objectWillChange: ObservableObjectPublisher { preferences.objectWillChange }
}

/// The OpenCombine trap from the issue.
@MainActor
final class ObservableObjectTrapTests: XCTestCase {
    func testSynthesisedPublisherIsNewOnEveryAccess() async {
        let trap = WithoutExplicitPublisher()
        XCTAssertFalse(trap.objectWillChange === trap.objectWillChange, "the trap: each access is a new publisher")
        var received = 0
        let c = trap.objectWillChange.sink { received += 1 }
        trap.a = 1
        XCTAssertEqual(received, 0, "changes through a synthesised publisher reach nobody")
        c.cancel()
    }

    func testExplicitPublisherIsStableAndDelivers() async {
        let builtIn = WithExplicitPublisher()
        XCTAssertTrue(builtIn.objectWillChange === builtIn.objectWillChange)
        var received = 0
        let c = builtIn.objectWillChange.sink { received += 1 }
        builtIn.readyForAction = true
        builtIn.readyForAction = true  // same value: no announcement
        XCTAssertEqual(received, 1)
        c.cancel()
    }
}
