internal import CLibevent
import Foundation

/// The sockets of one worker's streams in an epoll set of their own, which the worker's libevent
/// base watches as one descriptor.
///
/// An idle stream is mostly bookkeeping, and 15,000 of them are what issue 33 measures: through
/// libevent each socket cost an `event` (128 bytes) and a slot in the base's descriptor map
/// (about 50 bytes more); here it costs its registration in the kernel's epoll set alone, which
/// it had anyway. Each registration carries the stream's id; a ready socket is handed to its
/// stream by the worker (`StreamWorker.socketReady`). Level-triggered, like libevent's events:
/// what is not handled now is reported again.
///
/// Worker thread only (the worker's base calls `drain`).
final class StreamSocketSet {
    /// Reported per `epoll_wait`; more stay ready for the next turn of the loop.
    static let batch = 256

    private let set: Int32
    /// Held so that its base outlives `event`.
    private let loop: EventLoop
    private var event: OpaquePointer?
    private let readyEvents: UnsafeMutablePointer<UInt32>
    private let readyData: UnsafeMutablePointer<UInt64>
    private let ready: (_ id: Int, _ readable: Bool, _ writable: Bool) -> Void

    /// `ready` is called for each stream whose socket has input, an end or an error
    /// (`readable`), or room after a refused write it asked to hear of (`writable`).
    init(loop: EventLoop, ready: @escaping (_ id: Int, _ readable: Bool, _ writable: Bool) -> Void) throws {
        set = try syscall("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        self.loop = loop
        self.ready = ready
        readyEvents = .allocate(capacity: Self.batch)
        readyData = .allocate(capacity: Self.batch)
        event = event_new(loop.base, set, Int16(EV_READ | EV_PERSIST), { _, _, context in
            Unmanaged<StreamSocketSet>.fromOpaque(context!).takeUnretainedValue().drain()
        }, Unmanaged.passUnretained(self).toOpaque())
        guard let event else {
            Foundation.close(set)
            readyEvents.deallocate()
            readyData.deallocate()
            throw EventHTTPError.libevent("event_new")
        }
        event_add(event, nil)
    }

    deinit {
        if let event { event_free(event) }
        Foundation.close(set)
        readyEvents.deallocate()
        readyData.deallocate()
    }

    /// Watches `fd` for input, its end and errors; false when the kernel refuses (out of memory).
    func add(_ fd: Int32, id: Int) -> Bool {
        (try? syscall("epoll_ctl ADD") { tidings_epoll_ctl(set, EPOLL_CTL_ADD, fd, UInt32(EPOLLIN.rawValue), UInt64(id)) }) != nil
    }

    /// Also reports room to write on `fd` (`writable`), or stops reporting it.
    func watch(_ fd: Int32, id: Int, writable: Bool) -> Bool {
        let events = UInt32(EPOLLIN.rawValue) | (writable ? UInt32(EPOLLOUT.rawValue) : 0)
        return (try? syscall("epoll_ctl MOD") { tidings_epoll_ctl(set, EPOLL_CTL_MOD, fd, events, UInt64(id)) }) != nil
    }

    /// Stops watching `fd` (before it is closed: a copy of the descriptor elsewhere would keep
    /// its registration alive).
    func remove(_ fd: Int32) {
        syscall("epoll_ctl DEL", tolerating: "the close that follows ends the registration anyway") {
            tidings_epoll_ctl(set, EPOLL_CTL_DEL, fd, 0, 0)
        }
    }

    private func drain() {
        guard let count = try? syscall("epoll_wait", { tidings_epoll_wait(set, readyEvents, readyData, Int32(Self.batch)) }) else { return }
        let trouble = UInt32(EPOLLHUP.rawValue) | UInt32(EPOLLERR.rawValue)
        for index in 0..<Int(count) {
            let events = readyEvents[index]
            ready(Int(readyData[index]), events & (UInt32(EPOLLIN.rawValue) | trouble) != 0,
                  events & (UInt32(EPOLLOUT.rawValue) | trouble) != 0)
        }
    }
}
