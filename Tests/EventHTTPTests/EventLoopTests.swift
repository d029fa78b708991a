import EventHTTP
import Foundation
import TestFixtures
import XCTest

final class EventLoopTests: XCTestCase {
    func testExecuteFromOtherThreadsRunsInOrderOnTheLoop() throws {
        let loop = try EventLoop()
        let seen = UncheckedBox<[Int]>([])
        let onLoop = UncheckedBox(true)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread { loop.run(); done.signal() }
        thread.start()
        for index in 0..<100 {
            loop.execute {
                if !loop.isOnLoopThread { onLoop.value = false }
                seen.value.append(index)
            }
        }
        loop.execute { loop.stop() }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(seen.value, Array(0..<100))
        XCTAssertTrue(onLoop.value)
        XCTAssertFalse(loop.isOnLoopThread)
    }

    func testTimersFireRepeatAndCancel() throws {
        let loop = try EventLoop()
        var once = 0, repeated = 0, cancelled = 0
        loop.schedule(after: 0.01) { once += 1 }
        let repeating = loop.schedule(after: 0.01, repeating: true) { repeated += 1 }
        let doomed = loop.schedule(after: 0.02) { cancelled += 1 }
        doomed.cancel()
        loop.schedule(after: 0.1) { repeating.cancel(); loop.stop() }
        loop.run()
        XCTAssertEqual(once, 1)
        XCTAssertGreaterThanOrEqual(repeated, 3)
        XCTAssertEqual(cancelled, 0)
        XCTAssertFalse(repeating.isScheduled)
    }

    /// The key enabler of the runtime model: with the loop on the main thread, main-actor work
    /// (MainActor.run from a detached task, Task continuations) runs inside the loop, and an
    /// idle loop does not spin.
    func testMainQueueRunsInsideTheLoopWithoutSpinning() throws {
        XCTAssertTrue(Thread.isMainThread, "XCTest runs tests on the main thread")
        let loop = try EventLoop()
        loop.integrateMainQueue()
        let hops = UncheckedBox(0)
        Task.detached {
            for _ in 0..<3 {
                await MainActor.run { hops.value += 1 }
                try? await Task.sleep(nanoseconds: 20_000_000)
            }
            await MainActor.run { loop.stop() }
        }
        let guardTimer = loop.schedule(after: 5) { loop.stop() }
        loop.run()
        guardTimer.cancel()
        XCTAssertEqual(hops.value, 3)

        // Idle for 300 ms with the main queue integrated: the loop's thread sleeps. Measured as
        // the time this thread was runnable (on a CPU or queued for one), a share of the idle
        // wall-clock time: a loop that spins (an undrained, level-triggered eventfd) is runnable
        // all of it on any host, however slow or busy, where CPU seconds would shrink with load.
        let wallStart = ContinuousClock.now
        let before = ProcessStats.currentThreadRunnableSeconds()
        loop.schedule(after: 0.3) { loop.stop() }
        loop.run()
        let runnable = ProcessStats.currentThreadRunnableSeconds() - before
        let idle = (ContinuousClock.now - wallStart) / .seconds(1)
        XCTAssertLessThan(runnable, idle / 3, "the idle loop spun: runnable \(runnable) s of \(idle) s")
    }
}
