internal import CLibevent
import HTTPTypes
import Foundation

/// One client connection, from accept to close, on a libevent bufferevent: the server's only
/// reader and writer of HTTP/1.1 on a socket.
///
/// - Reading (`+Reading`): the bytes the socket adds to the bufferevent's input are framed by the
///   connection's `FramingMachine` where they lie — the one strict parser — and its heads and
///   bodies become `Request`s. One request is answered at a time: while one is in flight, the
///   bytes a client pipelines behind it wait in the input (past `unparsedInputLimit` the socket
///   is not read, so a client that does not read its answers stops being read), and answers
///   leave in request order.
/// - Deciding at the head (`+Head`): a head whose body is still to come is refused or admitted
///   before any of the body is read.
/// - Clocks (`+Clocks`): the head, body, idle and over-cap deadlines on one timer, a write
///   timeout on the bufferevent.
/// - Writing (`+Writing`): status line, fields and body into the bufferevent's output;
///   `Connection: close`, HTTP/1.0 without keep-alive and every refusal close once written
///   (the write side first, then a short linger that drops what the client still sends, so
///   the answer is not lost to a reset).
/// - A stream (`HTTPServer+Streams`) is a mode of the connection: once its earlier answers are
///   written, the bufferevent is freed without closing the socket and the descriptor goes to a
///   stream worker.
///
/// The socket's descriptor is the connection's own: the bufferevent never closes it
/// (no `BEV_OPT_CLOSE_ON_FREE`). Loop-thread confined.
final class Connection {
    enum State {
        /// Reading requests and answering them.
        case open
        /// The last answer is written, or being written; then the connection closes.
        case closing
        /// Written and shut for writing: reading and dropping what the client still sends.
        case lingering
        /// Waiting for earlier answers to be written, then the socket goes to a stream worker.
        case handingOff(StreamHandOff)
        /// Closed, or handed to a stream worker.
        case closed
    }

    unowned let server: HTTPServer
    let fd: Int32
    private(set) var bufferevent: OpaquePointer?
    var state = State.open

    // The state read on every request is not checked for overlapping access at run time (a
    // call into the runtime each time): the connection is loop-thread confined, and no access
    // spans a call that could re-enter it.
    var machine: FramingMachine
    /// The head read whose body is still arriving (nil between requests).
    var reading: RequestHead?
    /// Body bytes of `reading` received so far (moved from the input as they arrive, without
    /// copying; copied out once, when the body is whole), or a whole body read at once or
    /// de-chunked (`chunkedBody`).
    let bodyBuffer: OpaquePointer
    var chunkedBody: [UInt8] = []
    /// The exchange being answered (nil between requests).
    var current: ConnectionExchange?
    /// True while the read loop runs (an answer given meanwhile lets the loop go on by itself).
    var isFraming = false
    /// Requests read so far.
    var requestsRead = 0
    /// The client sent its end of file (it may still read the answers).
    var inputEnded = false

    /// The peer's address once admitted (nil when it could not be read).
    var address: String?
    /// Whether the peer is a trusted proxy (`--trusted-proxy`): its requests name their client.
    var isTrustedProxy = false
    /// The address the limiter counts this connection under (nil for a trusted proxy).
    var countedAddress: String?
    /// Set when the connection is over its client's share: its first request is refused
    /// once its head is read, a stream with 200 + `retry:`.
    var clientCapRefusal: FramingRefusal?

    /// The timer of the deadline running now (`+Clocks`).
    var timer: OpaquePointer?
    var clock = Clock.none
    /// The machine's deadline the timer was last set for.
    var machineClock = FramingMachine.Clock()
    enum Clock { case none, head, body, idle, overCap, linger }

    init(server: HTTPServer, fd: Int32) {
        self.server = server
        self.fd = fd
        machine = FramingMachine(maxHeadBytes: server.configuration.maxHeaderSize,
                                 maxBodyBytes: server.configuration.maxBodySize, budget: server.bodyBudget)
        bodyBuffer = evbuffer_new()
    }

    deinit { evbuffer_free(bodyBuffer) }

    /// Drops what was received of the body being read.
    func discardBody() {
        chunkedBody = []
        evbuffer_drain(bodyBuffer, evbuffer_get_length(bodyBuffer))
    }

    /// Makes the bufferevent and starts reading; false when libevent cannot (the caller closes).
    func start() -> Bool {
        guard let bev = bufferevent_socket_new(server.loop.base, fd, 0) else { return false }
        bufferevent = bev
        // What a client pipelines while an answer is being made piles up in the input: past
        // this mark the socket is not read any more, so the kernel's window pushes back on the
        // client instead of the server buffering without bound.
        bufferevent_setwatermark(bev, Int16(EV_READ), 0, server.configuration.unparsedInputLimit)
        let writeTimeout = server.configuration.idleTimeout
        if writeTimeout > 0 {
            var interval = timeval(seconds: min(writeTimeout, server.configuration.readTimeout))
            bufferevent_set_timeouts(bev, nil, &interval)
        }
        bufferevent_setcb(bev, { _, context in
            Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().readable()
        }, { _, context in
            Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().written()
        }, { _, what, context in
            Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().failed(what)
        }, Unmanaged.passUnretained(self).toOpaque())
        bufferevent_enable(bev, Int16(EV_READ | EV_WRITE))
        return true
    }

    /// Bytes waiting in the output for this client.
    var bufferedOutput: Int {
        guard let bufferevent, let output = bufferevent_get_output(bufferevent) else { return 0 }
        return evbuffer_get_length(output)
    }

    var isOpen: Bool { if case .open = state { true } else { false } }

    // MARK: Events

    /// The output is empty: a closing connection closes, a paused reader resumes, a stream's
    /// socket leaves.
    private func written() {
        switch state {
        case .open:
            if current == nil {
                resumeReading()
                finishIfInputEnded()
            }
        case .closing:
            linger()
        case .handingOff(let handOff):
            server.detach(self, to: handOff)
        case .lingering, .closed:
            break
        }
    }

    /// End of file, an error, or the write timeout: the client is gone or stuck — or, at end of
    /// file alone, done sending: what it sent before is still answered, then the connection closes.
    private func failed(_ what: Int16) {
        let endOfInput = what & Int16(BEV_EVENT_EOF) != 0 && what & Int16(BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT) == 0
        switch state {
        case .open where endOfInput:
            inputEnded = true
            if current == nil { resumeReading() }
            finishIfInputEnded()
        case .closing where endOfInput:
            break   // the last answer is still being written
        default:
            close()
        }
    }

    /// After the client's end of file: once nothing is in flight, the connection closes (after
    /// writing what waits).
    func finishIfInputEnded() {
        guard inputEnded, isOpen, current == nil else { return }
        if bufferedOutput > 0 { closeAfterWriting() } else { close() }
    }

    // MARK: Closing

    /// The answer just written is the last: nothing after it is read, and once it is written
    /// the connection closes.
    func closeAfterWriting() {
        guard isOpen else { return }
        state = .closing
        machine.refuse()
        machineClock = machine.clock
        reading = nil
        discardBody()
        clock = .none
        stopTimer()
        if bufferedOutput == 0 { linger() }
    }

    /// Shuts the write side once the last answer is written, then reads and drops what the
    /// client still sends for a moment (its unread bytes must not turn the close into a reset
    /// that destroys the answer before the client read it), and closes.
    private func linger() {
        guard let bufferevent else { return close() }
        state = .lingering
        syscall("shutdown", tolerating: "the close follows anyway") { shutdown(fd, Int32(SHUT_WR)) }
        if let input = bufferevent_get_input(bufferevent) { evbuffer_drain(input, evbuffer_get_length(input)) }
        bufferevent_setwatermark(bufferevent, Int16(EV_READ), 0, 0)
        bufferevent_disable(bufferevent, Int16(EV_WRITE))
        bufferevent_enable(bufferevent, Int16(EV_READ))
        clock = .linger
        armTimer(Self.lingerSeconds)
    }

    /// How long a closing connection reads and drops what its client still sends.
    static let lingerSeconds = 2.0

    /// Closes now: the socket, the timer, the bufferevent; the server forgets the connection.
    func close() {
        if case .closed = state { return }
        var handedOff = false
        if case .handingOff(let handOff) = state {
            // The socket never reached the worker: it drops the stream (the stream's slot).
            handOff.clientLeft()
            handedOff = true
        }
        state = .closed
        releaseResources()
        syscall("close", tolerating: "the descriptor is gone either way") { Foundation.close(fd) }
        let exchange = current
        current = nil
        exchange?.connectionClosed()
        server.connectionClosed(self, countedSlot: !handedOff)
    }

    /// Stops the timer and frees the bufferevent (never closing the socket) and the body budget.
    func releaseResources() {
        if let timer {
            event_free(timer)
            self.timer = nil
        }
        clock = .none
        machine.close()
        discardBody()
        reading = nil
        if let bufferevent {
            bufferevent_free(bufferevent)
            self.bufferevent = nil
        }
    }
}
