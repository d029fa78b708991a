import Foundation
import Synchronization
import TestFixtures
import XCTest
@testable import EventHTTP

/// The owning-thread record behind the debug-build confinement checks, and the one errno helper.
final class ThreadConfinementTests: XCTestCase {
    func testOnlyTheBoundThreadIsTheOwner() {
        let confinement = ThreadConfinement()
        XCTAssertFalse(confinement.isCurrentThreadOwner, "nobody owns it before binding")
        confinement.check("unbound")   // passes: set-up code runs before the loop does
        confinement.bindToCurrentThread()
        XCTAssertTrue(confinement.isCurrentThreadOwner)
        confinement.check("owner")
        let elsewhere = DispatchSemaphore(value: 0)
        let seenElsewhere = Mutex(true)
        Thread {
            seenElsewhere.withLock { $0 = confinement.isCurrentThreadOwner }
            elsewhere.signal()
        }.start()
        elsewhere.wait()
        XCTAssertFalse(seenElsewhere.withLock { $0 }, "another thread is not the owner")
        confinement.unbind()
        XCTAssertFalse(confinement.isCurrentThreadOwner)
    }

    func testTheLoopIsOwnedByTheThreadRunningIt() throws {
        let loop = try EventLoop()
        XCTAssertFalse(loop.isOnLoopThread)
        let ran = DispatchSemaphore(value: 0)
        let onLoop = Mutex(false)
        let thread = Thread { loop.run() }
        thread.start()
        loop.execute {
            onLoop.withLock { $0 = loop.isOnLoopThread }
            ran.signal()
        }
        ran.wait()
        loop.stop()
        XCTAssertTrue(onLoop.withLock { $0 })
        XCTAssertFalse(loop.isOnLoopThread, "the test thread is not the loop's")
    }

    func testSyscallCapturesErrnoAsATypedError() {
        XCTAssertThrowsError(try syscall("close") { close(-1) }) { error in
            XCTAssertEqual(error as? SystemError, SystemError(call: "close", code: EBADF))
            XCTAssertEqual((error as? SystemError)?.isTransient, false)
            XCTAssertEqual("\(error)".split(separator: ":").first, "close", "the call named first: \(error)")
        }
        let descriptor = try? syscall("dup") { dup(0) }
        XCTAssertNotNil(descriptor)
        if let descriptor { close(descriptor) }
    }
}
