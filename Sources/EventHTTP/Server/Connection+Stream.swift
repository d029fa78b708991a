internal import CLibevent

/// Where a connection that became an event stream sends its socket.
struct StreamHandOff {
    let remote: WorkerStream
    let worker: Int
    unowned let server: HTTPServer

    /// The client went away before its socket moved: the worker drops the stream.
    func clientLeft() {
        server.dispatch?.enqueue(.socket(remote, fd: -1), to: worker)
    }
}

/// A stream is a mode of its connection: nothing more is read as a request, and once the
/// answers written before it have left, the socket goes to the worker — no copy of pending
/// output, no second descriptor.
extension Connection {
    func becomeStream(_ handOff: StreamHandOff) {
        guard isOpen, let bufferevent else {
            handOff.clientLeft()
            return
        }
        state = .handingOff(handOff)
        current = nil
        machine.refuse()
        machineClock = machine.clock
        clock = .none
        stopTimer()
        bufferevent_disable(bufferevent, Int16(EV_READ))
        if bufferedOutput == 0 {
            // From the route's own call: the detach waits for the loop (`HTTPServer.detach`).
            server.detach(self, to: handOff)
        }
        // Otherwise once the output is empty (`written()`).
    }

    /// The bufferevent is freed without closing the socket, which now belongs to the caller;
    /// the server forgets the connection (its slot stays with the stream).
    func releaseForStream() -> Int32 {
        releaseResources()
        state = .closed
        server.connectionClosed(self, countedSlot: false)
        return fd
    }
}
