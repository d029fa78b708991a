import Foundation
import Synchronization

/// The thread an object is confined to, and the check of that claim.
///
/// EventHTTP's `@unchecked Sendable` types (the loop, responders, stream workers) and its
/// loop-confined ones (connections, event streams)
/// are not locked: they promise that their state is touched on one thread only, the thread
/// running their `EventLoop`. `check()` turns that promise into a debug-build precondition at
/// their entry points; release builds compile it away. Before a thread is bound (set-up, before
/// `run()`) and after it unbinds, any thread passes.
final class ThreadConfinement: Sendable {
    /// The owning thread's id (0: none). Atomic: any thread compares it with its own id, which
    /// it can only equal if that thread wrote it.
    private let owner = Atomic<UInt>(0)

    /// Makes the calling thread the owner (at the start of its run loop).
    func bindToCurrentThread() { owner.store(Self.currentThreadID, ordering: .releasing) }

    /// Releases the ownership (when the run loop returns).
    func unbind() { owner.store(0, ordering: .releasing) }

    /// Whether the caller is the owning thread.
    var isCurrentThreadOwner: Bool {
        let current = owner.load(ordering: .acquiring)
        return current != 0 && current == Self.currentThreadID
    }

    /// Debug builds: traps unless the caller is the owner or nobody owns it yet.
    @inline(__always)
    func check(_ what: @autoclosure () -> String = "", file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        let current = owner.load(ordering: .acquiring)
        precondition(current == 0 || current == Self.currentThreadID,
                     "\(what()) used off its owning thread", file: file, line: line)
        #endif
    }

    /// `pthread_t` is an integer on Linux; nonzero for every running thread.
    private static var currentThreadID: UInt { UInt(pthread_self()) }
}

extension EventLoop {
    /// Debug builds: traps unless called on this loop's thread (or before it runs). The check
    /// behind every type confined to a loop; see ``ThreadConfinement``.
    @inline(__always)
    func checkConfined(_ what: @autoclosure () -> String = "", file: StaticString = #fileID, line: UInt = #line) {
        confinement.check(what(), file: file, line: line)
    }
}
