import OpenCombine
import XCTest
@testable import Observing

private final class Counter: ObservableObject {
    @Published var count = 0
}

@MainActor
private final class Screen: @preconcurrency ObservableObject {
    let objectWillChange = ObservableObjectPublisher()
    @PublishedObject var counter = Counter()
    let onDeinit: () -> Void

    init(onDeinit: @escaping () -> Void = {}) {
        self.onDeinit = onDeinit
        _ = counter  // start forwarding now
    }

    isolated deinit { onDeinit() }
}

/// Idea 4: inner changes reach the outer object's objectWillChange, before the change.
@MainActor
final class PublishedObjectTests: XCTestCase {
    func testInnerChangesAreForwardedInWillSetOrder() async {
        let screen = Screen()
        let inner = screen.counter
        var seen: [Int] = []
        let c = screen.objectWillChange.sink { seen.append(inner.count) }
        inner.count = 1
        inner.count = 2
        XCTAssertEqual(seen, [0, 1], "forwarded before each change")
        c.cancel()
    }

    func testReplacingTheObjectAnnouncesAndFollowsTheNewOne() async {
        let screen = Screen()
        let old = screen.counter
        var announcements = 0
        let c = screen.objectWillChange.sink { announcements += 1 }
        screen.counter = Counter()
        XCTAssertEqual(announcements, 1)
        old.count = 5
        XCTAssertEqual(announcements, 1, "the old object is no longer forwarded")
        screen.counter.count = 1
        XCTAssertEqual(announcements, 2)
        c.cancel()
    }

    func testOwnerIsReleasedAndForwardingEndsWithIt() async {
        let inner = Counter()
        var deinits = 0
        weak var weakScreen: Screen?
        do {
            let screen = Screen(onDeinit: { deinits += 1 })
            screen.counter = inner
            weakScreen = screen
            inner.count = 1
        }
        XCTAssertNil(weakScreen, "no retain cycle through the forwarding subscription")
        XCTAssertEqual(deinits, 1)
        inner.count = 2  // must not reach (or crash on) the released owner
    }
}
