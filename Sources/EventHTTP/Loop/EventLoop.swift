internal import CLibevent
import Foundation
import Synchronization

/// One libevent `event_base` and the thread that runs it.
///
/// Everything EventHTTP owns (sockets, connections, timers, streams) is confined to the thread that
/// calls `run()`; its callbacks run there. The only members safe from any thread are
/// `execute(_:)`, `stop()` and `isOnLoopThread`; they are why the type is `Sendable`.
/// `@unchecked` because the rest is confined, not locked: `execute` queues through a `Mutex`
/// and an eventfd, `isOnLoopThread` reads an atomic, and the loop-confined members check the
/// confinement (`checkConfined`, see ``ThreadConfinement``).
///
/// ```swift
/// let loop = try EventLoop()
/// loop.execute { print("on the loop") }
/// loop.run()   // blocks until stop()
/// ```
public final class EventLoop: @unchecked Sendable {
    /// The raw base; touch only on the loop thread.
    let base: OpaquePointer
    private let wakeEvent: OpaquePointer
    /// Work `execute` queued from any thread, run in order by the loop.
    private let pending = Mutex<[@Sendable () -> Void]>([])
    /// The thread running `run()`: what every type confined to this loop checks against.
    let confinement = ThreadConfinement()
    private var mainQueueEvent: OpaquePointer?
    private var signalEvents: [OpaquePointer] = []
    /// The handlers the signal events call (their C context points at these, unretained).
    private var signalHandlers: [CallbackBox] = []
    /// Loop-confined receivers of what other threads `post` (read and written on the loop only).
    private var receivers: [Int: (any Sendable) -> Void] = [:]
    private var nextReceiver = 0

    /// The eventfd `execute` signals from any thread.
    private let wakeDescriptor: Int32

    /// Creates a loop. libevent's own locking stays off: only the loop thread touches the base,
    /// and other threads reach it through an eventfd (`execute`), so every buffer operation on
    /// the request path runs without a mutex.
    ///
    /// With `batchesDescriptorChanges` (the default), epoll interest changes wait in libevent's
    /// change list until the loop next polls, and one that is undone before then costs nothing:
    /// a keep-alive request makes 2 `epoll_ctl` calls instead of 4 (reading and writing
    /// turned on and off around each answer), about 10% of the request rate. The cost is libevent's
    /// documented caveat: a descriptor must not be `dup`'ed over (or closed and reused) while a
    /// change for it waits. The server's stream hand-off gives a socket to a worker (which may
    /// close it) only a turn after the loop let go of it, for that.
    public init(batchesDescriptorChanges: Bool = true) throws {
        guard let base = Self.makeBase(batchesDescriptorChanges) else { throw EventHTTPError.libevent("event_base_new") }
        self.base = base
        // The cross-thread wake-up: an eventfd any thread may signal (a plain system call, so
        // libevent itself needs no locking), drained by the loop before it runs the queued work.
        guard let wakeDescriptor = try? syscall("eventfd", { eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC)) }) else {
            event_base_free(base)
            throw EventHTTPError.libevent("eventfd")
        }
        self.wakeDescriptor = wakeDescriptor
        guard let wake = event_new(base, wakeDescriptor, Int16(EV_READ | EV_PERSIST), { _, _, ctx in
            Unmanaged<EventLoop>.fromOpaque(ctx!).takeUnretainedValue().drainPending()
        }, nil) else {
            close(wakeDescriptor)
            event_base_free(base)
            throw EventHTTPError.libevent("event_new")
        }
        wakeEvent = wake
        event_assign(wake, base, wakeDescriptor, Int16(EV_READ | EV_PERSIST), { _, _, ctx in
            Unmanaged<EventLoop>.fromOpaque(ctx!).takeUnretainedValue().drainPending()
        }, Unmanaged.passUnretained(self).toOpaque())
        event_add(wake, nil)
    }

    private static func makeBase(_ batchesDescriptorChanges: Bool) -> OpaquePointer? {
        guard batchesDescriptorChanges, let config = event_config_new() else { return event_base_new() }
        defer { event_config_free(config) }
        syscall("event_config_set_flag", tolerating: "the base then applies each descriptor change at once") {
            event_config_set_flag(config, Int32(EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST.rawValue))
        }
        return event_base_new_with_config(config) ?? event_base_new()
    }

    deinit {
        for event in signalEvents { event_free(event) }
        if let mainQueueEvent { event_free(mainQueueEvent) }
        event_free(wakeEvent)
        close(wakeDescriptor)
        event_base_free(base)
    }

    /// Runs `work` on the loop thread soon (in FIFO order). Safe from any thread, including the
    /// loop thread itself (then it runs on a later turn, never re-entrantly).
    public func execute(_ work: @escaping @Sendable () -> Void) {
        let first = pending.withLock {
            $0.append(work)
            return $0.count == 1
        }
        // One wake-up covers the whole batch.
        if first {
            var one: UInt64 = 1
            syscall("write eventfd", tolerating: "only when the counter is full: a wake-up is pending then") {
                write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
            }
        }
    }

    /// Registers `receive` for messages other threads `post` to the returned key; it runs on the
    /// loop thread, so it may touch loop-confined state that is not `Sendable` itself (a server,
    /// say) without the poster ever holding a reference to it. Call on the loop thread (or
    /// before `run()`).
    func addReceiver(_ receive: @escaping (any Sendable) -> Void) -> Int {
        confinement.check("EventLoop.addReceiver")
        nextReceiver += 1
        receivers[nextReceiver] = receive
        return nextReceiver
    }

    /// Forgets a receiver (later posts to it are dropped). Loop thread.
    func removeReceiver(_ key: Int) {
        confinement.check("EventLoop.removeReceiver")
        receivers.removeValue(forKey: key)
    }

    /// Hands `message` to receiver `key` on the loop thread (in `execute` order). Any thread.
    func post(_ message: any Sendable, to key: Int) {
        execute { [self] in receivers[key]?(message) }
    }

    private func drainPending() {
        var count: UInt64 = 0
        syscall("read eventfd", tolerating: "nothing to drain (EAGAIN): the batch runs anyway") {
            read(wakeDescriptor, &count, MemoryLayout<UInt64>.size)
        }
        let batch = pending.withLock {
            let batch = $0
            $0.removeAll(keepingCapacity: true)
            return batch
        }
        for work in batch { work() }
    }

    /// Runs the loop on the calling thread until `stop()`. The loop stays alive with no events.
    public func run() {
        confinement.bindToCurrentThread()
        if let failure = syscall("event_base_loop", tolerating: "reported; the caller's run() returns either way", {
            event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY)
        }) {
            FileHandle.standardError.write(Data("event loop failed: \(failure)\n".utf8))
        }
        confinement.unbind()
    }

    /// Makes `run()` return after the current callback. Safe from any thread (off the loop
    /// thread it hops there first: the base is not locked).
    public func stop() {
        if isOnLoopThread {
            syscall("event_base_loopbreak", tolerating: "fails only without a base") { event_base_loopbreak(base) }
        } else {
            execute { [self] in
                syscall("event_base_loopbreak", tolerating: "fails only without a base") { event_base_loopbreak(self.base) }
            }
        }
    }

    /// Whether the caller is on the thread currently running `run()`.
    public var isOnLoopThread: Bool { confinement.isCurrentThreadOwner }

    /// Lets libdispatch's main queue (and therefore the main actor: `@MainActor` code,
    /// `await MainActor.run`, continuations resumed there) run inside this loop.
    ///
    /// Call on the main thread before `run()`, and run the loop on the main thread. libdispatch
    /// signals pending main-queue work on an eventfd; we watch it, drain the counter ourselves
    /// (the callback does not, so a level-triggered watch would spin) and let dispatch run the
    /// queue. Verified: hops from detached tasks run, and the idle loop uses no CPU.
    public func integrateMainQueue() {
        precondition(Thread.isMainThread, "integrateMainQueue() needs the main thread")
        guard mainQueueEvent == nil else { return }
        let fd = _dispatch_get_main_queue_handle_4CF()
        guard let event = event_new(base, fd, Int16(EV_READ | EV_PERSIST), { fd, _, _ in
            var counter: UInt64 = 0
            syscall("read eventfd", tolerating: "nothing to drain (EAGAIN): the queue runs anyway") {
                read(fd, &counter, MemoryLayout<UInt64>.size)
            }
            _dispatch_main_queue_callback_4CF(nil)
        }, nil) else { preconditionFailure("event_new failed at start-up: out of memory") }
        mainQueueEvent = event
        event_add(event, nil)
    }

    /// Calls `handler` on the loop thread whenever `signal` arrives (libevent signal events,
    /// so the handler may do anything). Call on the loop thread or before `run()`.
    public func onSignal(_ signal: Int32, _ handler: @escaping () -> Void) {
        checkConfined("EventLoop.onSignal")
        let box = CallbackBox(handler)
        guard let event = event_new(base, signal, Int16(EV_SIGNAL | EV_PERSIST), { _, _, ctx in
            Unmanaged<CallbackBox>.fromOpaque(ctx!).takeUnretainedValue().body()
        }, Unmanaged.passUnretained(box).toOpaque()) else { return }
        event_add(event, nil)
        signalEvents.append(event)
        signalHandlers.append(box)
    }

    /// Runs `body` on the loop thread after `delay` seconds, and then every `delay` seconds
    /// when `repeating`. Call on the loop thread; cancel with the returned handle.
    @discardableResult
    public func schedule(after delay: Double, repeating: Bool = false,
                         _ body: @escaping () -> Void) -> TimerHandle {
        checkConfined("EventLoop.schedule")
        return TimerHandle(loop: self, delay: delay, repeating: repeating, body: body)
    }
}

/// A closure kept alive for a C callback context.
final class CallbackBox {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}
