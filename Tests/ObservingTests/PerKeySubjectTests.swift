import OpenCombine
import XCTest
@testable import Observing

/// Idea 3: one subject per key — current value on subscription, and other keys cost nothing.
@MainActor
final class PerKeySubjectTests: XCTestCase {
    func testPublisherEmitsCurrentValueOnSubscriptionThenEachChange() async throws {
        let prefs = TestPreferences().preferences
        try prefs.propose(PreferencePatch(values: ["a": .integer(3)]))
        var received: [PreferenceValue] = []
        let c = prefs.publisher(forKey: "a")!.sink { received.append($0) }
        XCTAssertEqual(received, [.integer(3)], "the current value arrives at once")
        try prefs.propose(PreferencePatch(values: ["a": .integer(4)]))
        try prefs.propose(PreferencePatch(values: ["a": .integer(4)]))  // same value: nothing
        try prefs.propose(PreferencePatch(values: ["a": nil]))
        XCTAssertEqual(received, [.integer(3), .integer(4), .integer(0)])
        c.cancel()
    }

    func testThousandObserversOfARunNoCodeWhenBChanges() async throws {
        let prefs = TestPreferences().preferences
        var invocations = 0
        var cancellables: [AnyCancellable] = []
        for _ in 0..<1_000 {
            cancellables.append(prefs.publisher(forKey: "a")!
                .map { value -> PreferenceValue in invocations += 1; return value }
                .sink { _ in invocations += 1 })
        }
        XCTAssertEqual(invocations, 2_000, "initial emission: map + sink once each")
        invocations = 0
        for i in 1...50 { try prefs.propose(PreferencePatch(values: ["b": .integer(i)])) }
        XCTAssertEqual(invocations, 0, "observers of a must run no code for changes of b")
        try prefs.propose(PreferencePatch(values: ["a": .integer(1)]))
        XCTAssertEqual(invocations, 2_000)
        _ = cancellables
    }

    func testChangedKeysAnnouncesEachChangedKeyOnceAfterItsOwnPublisher() async throws {
        let prefs = TestPreferences().preferences
        var log: [String] = []
        let a = prefs.publisher(forKey: "a")!.dropFirst().sink { _ in log.append("a-subject") }
        let keys = prefs.changedKeys.sink { log.append("changed:\($0)") }
        try prefs.propose(PreferencePatch(values: ["a": .integer(1), "b": .integer(0)]))  // b unchanged
        XCTAssertEqual(log, ["a-subject", "changed:a"])
        _ = (a, keys)
    }

    func testUnknownKeyHasNoPublisher() async {
        XCTAssertNil(TestPreferences().preferences.publisher(forKey: "nope"))
    }
}
