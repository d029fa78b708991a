import OpenCombine
import XCTest
@testable import Observing

/// Idea 3: several changes are validated together, applied atomically, announced once each.
@MainActor
final class AtomicUpdateTests: XCTestCase {
    func testOneInvalidValueAnnouncesAndAppliesNothing() async throws {
        let owner = TestPreferences()
        let prefs = owner.preferences
        var announcements = 0
        let subs = ["a", "b", "level"].map { prefs.publisher(forKey: $0)!.dropFirst().sink { _ in announcements += 1 } }
        let will = prefs.objectWillChange.sink { announcements += 1 }
        XCTAssertThrowsError(try prefs.propose(PreferencePatch(values: ["a": .integer(1), "b": .integer(2), "level": .integer(11)]))) { error in
            XCTAssertEqual((error as? PreferenceValidationError)?.issues, [PreferenceIssue(key: "level", problem: .aboveMaximum(10))])
        }
        XCTAssertEqual(announcements, 0)
        XCTAssertEqual(prefs.value(forKey: "a"), .integer(0))
        XCTAssertEqual(owner.store.writeCount, 0, "nothing written")
        _ = (subs, will)
    }

    func testValidateReportsEveryBadKey() async {
        let prefs = TestPreferences().preferences
        XCTAssertThrowsError(try prefs.validate(PreferencePatch(values: [
            "a": .number(1.5), "level": .integer(-1), "title": .string("toolong"),
            "mode": .string("medium"), "ghost": .boolean(true), "ratio": .string("x"), "b": .integer(1),
        ]))) { error in
            let issues = (error as! PreferenceValidationError).issues
            XCTAssertEqual(issues.map(\.key), ["a", "ghost", "level", "mode", "ratio", "title"])
            XCTAssertEqual(issues[0].message, "expected a value of type integer")
            XCTAssertEqual(issues[1].problem, .unknownKey)
            XCTAssertEqual(issues[2].message, "must be at least 0")
            XCTAssertEqual(issues[3].message, #"must be one of "fast", "slow""#)
            XCTAssertEqual(issues[4].message, "expected a value of type number")
            XCTAssertEqual(issues[5].problem, .tooLong(maxLength: 5))
        }
    }

    func testValidateThenReceiveIsTheServersSplit() async throws {
        let owner = TestPreferences()
        let prefs = owner.preferences
        var received: [PreferenceValue] = []
        let c = prefs.publisher(forKey: "ratio")!.dropFirst().sink { received.append($0) }
        let validated = try prefs.validate(PreferencePatch(values: ["ratio": .integer(2), "a": .integer(0), "level": nil]))
        XCTAssertEqual(validated.changedKeys, ["ratio"], "a and level already have these values")
        XCTAssertEqual(validated.entries.first { $0.key == "ratio" }?.newValue, .number(2), "a number accepts 2")
        XCTAssertEqual(prefs.value(forKey: "ratio"), .number(0.5), "validation applies nothing")
        // The store made it durable as revision 1; the container receives the checked value.
        let durable = validated.entries.map { PreferenceChange<Never>(key: $0.key, value: $0.newValue, revision: $0.key == "ratio" ? 1 : 0) }
        XCTAssertEqual(prefs.receive(durable), ["ratio"])
        XCTAssertEqual(received, [.number(2)])
        XCTAssertEqual(prefs.revision(forKey: "ratio"), 1)
        XCTAssertEqual(owner.store.writeCount, 0, "receive does not write the store: the caller made it durable")
        XCTAssertEqual(prefs.receive(durable), [], "receiving again changes nothing and announces nothing")
        XCTAssertEqual(received, [.number(2)])
        XCTAssertTrue(prefs.receive(PreferenceChange(key: "ratio", value: .number(2), revision: 2)),
                      "a new revision of the same value is news")
        XCTAssertEqual(received, [.number(2), .number(2)])
        c.cancel()
    }

    func testMergePatchDecodingNamesEveryBadKey() async throws {
        let prefs = TestPreferences().preferences
        let patch = try JSONDecoder().decode(PreferencePatch.self, from: Data(#"{"a": [1], "b": null, "level": 1.5, "title": "ok"}"#.utf8))
        XCTAssertThrowsError(try prefs.validate(patch)) { error in
            XCTAssertEqual((error as! PreferenceValidationError).issues, [
                PreferenceIssue(key: "a", problem: .wrongType(expected: .integer)),
                PreferenceIssue(key: "level", problem: .wrongType(expected: .integer)),
            ])
        }
        // A number preference takes an integer as that number.
        XCTAssertEqual(try prefs.validate(PreferencePatch(["ratio": .value(.integer(2))])).entries.map(\.newValue), [.number(2)])
    }

    func testNonFiniteNumbersAreRefused() async {
        let prefs = TestPreferences().preferences
        XCTAssertThrowsError(try prefs.propose(PreferencePatch(values: ["ratio": .number(.nan)])))
        XCTAssertThrowsError(try prefs.propose(PreferencePatch(values: ["ratio": .number(.infinity)])))
        XCTAssertEqual(prefs.value(forKey: "ratio"), .number(0.5))
    }

    func testSetWritesThroughTheStore() async throws {
        let owner = TestPreferences()
        try owner.preferences.propose(PreferencePatch(values: ["a": .integer(9), "title": .string("hi")]))
        XCTAssertEqual(owner.store.writeCount, 1, "one write for the batch")
        XCTAssertEqual(owner.store.value(forKey: "a"), .integer(9))
        try owner.preferences.propose(PreferencePatch(values: ["a": nil]))
        XCTAssertNil(owner.store.value(forKey: "a"), "a reset removes the stored value")
        XCTAssertEqual(TestPreferences(store: owner.store).a, 0)
        XCTAssertEqual(TestPreferences(store: owner.store).title, "hi", "a new container starts from the store")
    }
}
