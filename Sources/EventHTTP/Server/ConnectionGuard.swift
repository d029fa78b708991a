internal import CLibevent
import HTTPTypes

/// Sits between a client socket and evhttp, so evhttp only ever sees requests the server's own
/// strict parser framed: the thin libevent adapter around a connection's `FramingMachine`.
///
/// How: the server makes each connection's bufferevent itself (`evhttp_set_bevcb`) and watches
/// its input buffer. Bytes the socket adds there are moved at once, before evhttp's read
/// callback runs, into the guard's own buffer; the machine says what goes back. The common
/// keep-alive read — one head already in canonical form (`CleanHead`), with none, all or the
/// start of the body it announces — is approved where it lies, without moving. (A libevent
/// filter bufferevent would do the same for input, but it reports a response as written once
/// it reaches the socket's buffer, and evhttp then frees a `Connection: close` connection with
/// the response still unsent.)
///
/// What the machine refuses — ambiguous framing, an unsupported version, an unknown method —
/// and what the guard refuses itself — a head not complete within `headerTimeout` of its first
/// byte, a connection over the caps (`+Admission`) — is replaced by a stand-in request whose
/// handler answers the problem with `Connection: close`; every later byte from that client is
/// dropped, so nothing hidden behind a refused request is ever parsed. Deadlines and "100
/// Continue" are in `+Clocks`. Loop-thread confined; one per accepted connection, counted from
/// accept.
final class ConnectionGuard {
    weak var server: HTTPServer?
    let base: OpaquePointer
    /// The connection's socket bufferevent (nil once the connection closed).
    private(set) var filter: OpaquePointer?
    private var inputWatch: OpaquePointer?
    /// Raw client bytes not yet framed.
    let pending: OpaquePointer
    /// True while the guard itself changes evhttp's input (its own callback then returns at once).
    var moving = false
    // The state read on every request is not checked for overlapping access at run time (a
    // call into the runtime each time): the guard is loop-thread confined, and no access to it
    // spans a call that could re-enter it (the input callback returns at once while `moving`).
    var machine: FramingMachine
    let headerTimeout: Double
    let bodyTimeout: Double
    /// The timer of the deadline running now (`+Clocks`).
    var timer: OpaquePointer?
    var clock = Clock.none
    /// The machine's deadline the timer was last set for.
    var machineClock = FramingMachine.Clock()
    enum Clock { case none, head, body, overCap }

    /// The peer's address once admitted (nil before, or when it could not be read).
    var address: String?
    /// Whether the peer is a trusted proxy (`--trusted-proxy`): its requests name their client.
    var isTrustedProxy = false
    /// The address the limiter counts this connection under (nil for a trusted proxy).
    var countedAddress: String?
    /// Set when the connection is over its client's share: its first request is refused
    /// once its head is read (`HTTPServer.handle`), a stream with 200 + `retry:`.
    var clientCapRefusal: FramingRefusal?
    /// The server's record of this connection, from its first request on (kept here so that a
    /// request needs one lookup, the guard's, not two).
    var connection: Connection?
    var admitted = false

    /// Requests evhttp has delivered to the server so far.
    var requestsSeen = 0
    /// Refusals by the index of the stand-in head that carries them (`machine.heads`).
    var refusals: [Int: Refusal] = [:]

    /// What a stand-in request is answered with.
    enum Refusal {
        /// A refusal of the bytes themselves: nothing of the request is trusted.
        case framing(FramingRefusal)
        /// An answer decided at the head (`+Head`: a route's credential check, 415), to the
        /// request as routed, so the router's middleware finishes it as any other answer.
        case answer(Response, to: Request)
    }

    private init(server: HTTPServer, base: OpaquePointer) {
        self.server = server
        self.base = base
        machine = FramingMachine(maxHeadBytes: server.configuration.maxHeaderSize,
                                 maxBodyBytes: server.configuration.maxBodySize, budget: server.bodyBudget)
        headerTimeout = server.configuration.headerTimeout
        bodyTimeout = server.configuration.bodyTimeout
        pending = evbuffer_new()
    }

    deinit { evbuffer_free(pending) }

    /// The bufferevent evhttp will use for a connection it is accepting (nil: let evhttp make
    /// its own, unguarded — only if libevent cannot allocate).
    static func makeBufferevent(base: OpaquePointer, server: HTTPServer) -> OpaquePointer? {
        guard let bev = bufferevent_socket_new(base, -1, Int32(BEV_OPT_CLOSE_ON_FREE.rawValue)) else { return nil }
        let connectionGuard = ConnectionGuard(server: server, base: base)
        connectionGuard.filter = bev
        // While evhttp does not parse (it is writing an answer to a client that may not be
        // reading it), what the client pipelines piles up in evhttp's input: past this mark the
        // socket is not read any more, so the kernel's window pushes back on the client instead
        // of the server buffering without bound. evhttp drains its input as it parses (a body
        // once all of it is there), and reading resumes below the mark.
        bufferevent_setwatermark(bev, Int16(EV_READ), 0, server.configuration.unparsedInputLimit)
        // Called on every change of the input, evhttp's own reads (n_added == 0) included:
        // those return at once.
        connectionGuard.inputWatch = evbuffer_add_cb(bufferevent_get_input(bev), { input, info, context in
            guard let count = info?.pointee.n_added, count > 0, let input, let context else { return }
            // The guard outlives its callback (removed in `closed()`): no retain around the call.
            Unmanaged<ConnectionGuard>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.bytesArrived(input, count: count) }
        }, Unmanaged.passUnretained(connectionGuard).toOpaque())
        server.guardOpened(connectionGuard)
        connectionGuard.admitOnNextTurn()
        return bev
    }

    /// The refusal evhttp's next delivered request stands in for, if any (call once per request).
    func nextRequest() -> Refusal? {
        defer { requestsSeen += 1 }
        return refusals.isEmpty ? nil : refusals.removeValue(forKey: requestsSeen)
    }

    // MARK: The input filter

    /// The socket added `count` bytes at the end of evhttp's input: take them out, frame them,
    /// put back only what evhttp may parse (or leave them, when all of them may be parsed as
    /// they are).
    private func bytesArrived(_ input: OpaquePointer, count: Int) {
        guard !moving else { return }
        let length = evbuffer_get_length(input)
        // The usual keep-alive request: evhttp had read everything before, and the new bytes
        // are one clean head (with all or the start of its body): they stay where they are.
        // (One access to the machine here: in debug builds each is a run-time exclusivity check.)
        if length == count, admitted, evbuffer_get_length(pending) == 0,
           let clock = machine.passInPlace(EvbufferInput(buffer: input)) {
            if clock != machineClock { syncClock() }
            return
        }
        moving = true
        defer { moving = false }
        let kept = length - count
        guard kept > 0 else {
            // evhttp had read everything before (the usual case): frame straight back into
            // its emptied input, no buffer in between.
            evbuffer_add_buffer(pending, input)
            filterInput(pending, input)
            return
        }
        let front = evbuffer_new()!
        defer { evbuffer_free(front) }
        evbuffer_remove_buffer(input, front, kept)
        evbuffer_add_buffer(pending, input)
        filterInput(pending, front)
        evbuffer_add_buffer(input, front)
    }

    /// Applies the machine's steps to `source` until it is used up; what goes on lands in `destination`.
    private func filterInput(_ source: OpaquePointer, _ destination: OpaquePointer) {
        if !admitted, let refusal = admit() { refuse(refusal, into: destination) }
        let input = EvbufferInput(buffer: source)
        while true {
            let headsBefore = machine.heads
            let wasReadingHead = machine.isReadingHead
            let step = machine.step(input)
            syncClock()
            switch step {
            case .needMore:
                return
            case .pass(let count):
                // A clean head whose body is still to come: decided before it goes on.
                if wasReadingHead, machine.awaitsBody,
                   let refusal = decideHead(headBytes: count, in: source) {
                    evbuffer_drain(source, count)
                    refuseHead(refusal, into: destination)
                    continue
                }
                evbuffer_remove_buffer(source, destination, count)
            case .take(let count):
                evbuffer_drain(source, count)
            case .replace(let consumed, let bytes, let expectsContinue):
                evbuffer_drain(source, consumed)
                if wasReadingHead, machine.awaitsBody,
                   let refusal = decideHead(canonical: bytes, bodyReceived: evbuffer_get_length(source)) {
                    refuseHead(refusal, into: destination)
                    continue
                }
                if expectsContinue, evbuffer_get_length(source) == 0 { sendContinue(headsBefore: headsBefore) }
                add(bytes, to: destination)
            case .refuse(let refusal, let consumed):
                evbuffer_drain(source, consumed)
                standIn(for: .framing(refusal), into: destination)
            case .cut(let refusal, let owed):
                // The head went on: its body is made up (never read) so the request completes
                // and its answer is the refusal.
                evbuffer_drain(source, evbuffer_get_length(source))
                syncClock()
                stopTimer()
                refusals[machine.heads - 1] = .framing(refusal)
                addZeros(owed, to: destination)
                stopReading()
            }
        }
    }

    /// Adds `count` zero bytes to `destination` (a body made up for a request refused after its
    /// head went on).
    func addZeros(_ count: Int, to destination: OpaquePointer) {
        var left = count
        while left > 0 {
            let piece = min(left, Self.zeros.count)
            _ = Self.zeros.withUnsafeBytes { zeros in
                syscall("evbuffer_add", tolerating: "out of memory: the connection times out instead") {
                    evbuffer_add(destination, zeros.baseAddress, piece)
                }
            }
            left -= piece
        }
    }

    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// Nothing after a refusal is read as a request: stop reading the socket while the answer
    /// waits its turn, rather than read and drop whatever the client keeps sending.
    func stopReading() {
        if let filter { bufferevent_setwatermark(filter, Int16(EV_READ), 0, 1) }
    }

    private func add(_ bytes: [UInt8], to destination: OpaquePointer) {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { bytes in
            syscall("evbuffer_add", tolerating: "out of memory: evhttp never sees the request, and the connection times out",
                    result: evbuffer_add(destination, bytes.baseAddress, bytes.count))
        }
    }

    // MARK: Refusals

    /// Refuses the stream: a stand-in request for `refusal`, and everything after it dropped.
    func refuse(_ refusal: FramingRefusal, into destination: OpaquePointer) {
        machine.refuse()
        standIn(for: .framing(refusal), into: destination)
    }

    /// Refuses the head just framed (it never goes on): a stand-in takes its place.
    private func refuseHead(_ refusal: Refusal, into destination: OpaquePointer) {
        machine.refuseHead()
        standIn(for: refusal, into: destination)
    }

    /// Hands evhttp the stand-in of a refusal the machine has made.
    private func standIn(for refusal: Refusal, into destination: OpaquePointer) {
        syncClock()
        stopTimer()
        refusals[machine.heads - 1] = refusal
        add(machine.standIn, to: destination)
        stopReading()
    }

    /// The same, from outside the filter callback (a timer): evhttp reads it as soon as it is
    /// reading, now or after the response it is writing.
    func refuseLater(_ refusal: FramingRefusal) {
        guard let filter, let input = bufferevent_get_input(filter), !machine.isClosed else { return }
        evbuffer_drain(pending, evbuffer_get_length(pending))
        withInputUnfrozen(input) { refuse(refusal, into: input) }
        bufferevent_trigger(filter, Int16(EV_READ), Int32(BEV_TRIG_DEFER_CALLBACKS.rawValue))
    }

    /// Runs `body` with the end of evhttp's input writable (the socket bufferevent freezes it
    /// between reads) and the guard's own callback quiet.
    func withInputUnfrozen(_ input: OpaquePointer, _ body: () -> Void) {
        moving = true
        evbuffer_unfreeze(input, 0)
        body()
        evbuffer_freeze(input, 0)
        moving = false
    }

    // MARK: Lifetime

    /// evhttp is freeing the connection (its close callback): stop watching, release the timer.
    func closed() {
        if let timer {
            event_free(timer)
            self.timer = nil
        }
        machine.close()
        if let filter, let inputWatch { evbuffer_remove_cb_entry(bufferevent_get_input(filter), inputWatch) }
        inputWatch = nil
        filter = nil
        connection = nil
    }
}

/// An evbuffer as the machine's input (its front made contiguous on demand).
private struct EvbufferInput: FramingInput {
    let buffer: OpaquePointer
    var count: Int { evbuffer_get_length(buffer) }
    func front(_ length: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: evbuffer_pullup(buffer, length), count: length)
    }
}
