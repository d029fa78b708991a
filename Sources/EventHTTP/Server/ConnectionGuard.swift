internal import CLibevent
import HTTPTypes
import Foundation

/// Sits between a client socket and evhttp, so evhttp only ever sees requests the server's own
/// strict parser framed: a complete head, re-serialised (`RequestFraming`), then exactly the
/// body bytes that head announced (a chunked body arrives de-chunked, with a `Content-Length`).
///
/// How: the server makes each connection's bufferevent itself (`evhttp_set_bevcb`) and watches
/// its input buffer. Bytes the socket adds there are moved at once, before evhttp's read
/// callback runs, into the guard's own buffer; only what the guard approves goes back. The
/// common keep-alive read — one head already in canonical form (`CleanHead`), with none, all
/// or the start of the body it announces — is approved where it lies, without moving. (A
/// libevent filter bufferevent would do the same for input, but it reports a response as
/// written once it reaches the socket's buffer, and evhttp then frees a `Connection: close`
/// connection with the response still unsent.)
///
/// What it refuses — ambiguous framing, a head not complete within `headerTimeout` of its
/// first byte, an unsupported version, an unknown method, a connection over the caps — it
/// replaces by a stand-in request whose handler answers the problem with `Connection: close`;
/// every later byte from that client is dropped, so nothing hidden behind a refused request is
/// ever parsed. Loop-thread confined; one per accepted connection, counted from accept.
final class ConnectionGuard {
    private enum State {
        case head
        case body(remaining: Int, forward: Bool)
        /// A chunked body being gathered into `decoder` (kept outside the enum, so feeding it
        /// mutates in place: a copy per read was a copy of the whole body so far).
        case chunked(ParsedHead)
        case closed
    }

    private weak var server: HTTPServer?
    private let base: OpaquePointer
    /// The connection's socket bufferevent (nil once the connection closed).
    private(set) var filter: OpaquePointer?
    private var inputWatch: OpaquePointer?
    /// Raw client bytes not yet framed.
    private let pending: OpaquePointer
    private var moving = false
    private let maxHeadBytes: Int
    private let maxBodyBytes: Int
    private let headerTimeout: Double
    private let bodyTimeout: Double
    /// The chunked body being gathered (state `.chunked`).
    private var decoder: ChunkedDecoder?
    /// Bytes of the server's body budget this connection holds (`HTTPServer.reserveBody`).
    private var reservedBody = 0
    /// Which deadline `timer` is running for.
    private enum Clock { case head, body, overCap }
    /// How long a connection over its client's share may take to send its first head before it
    /// is refused anyway: long enough to tell a stream (200 + `retry:`) from anything else
    /// (503), short enough that silent sockets cannot hold descriptors over the share.
    static let overCapGrace = 1.0
    private var clock = Clock.head

    // The state read on every request is not checked for overlapping access at run time (a
    // call into the runtime each time): the guard is loop-thread confined, and no access to it
    // spans a call that could re-enter it (the input callback returns at once while `moving`).
    private var state = State.head
    private var head: [UInt8] = []
    private var headClockStarted = false
    private var timer: OpaquePointer?
    /// The peer's address once admitted (nil before, or when it could not be read).
    private(set) var address: String?
    /// Whether the peer is a trusted proxy (`--trusted-proxy`): its requests name their client.
    private(set) var isTrustedProxy = false
    /// The address the limiter counts this connection under (nil for a trusted proxy).
    private(set) var countedAddress: String?
    /// Set when the connection is over its client's share: its first request is refused
    /// once its head is read (`HTTPServer.handle`), a stream with 200 + `retry:`.
    private(set) var clientCapRefusal: FramingRefusal?
    /// The server's record of this connection, from its first request on (kept here so that a
    /// request needs one lookup, the guard's, not two).
    var connection: Connection?
    private var admitted = false
    private var minorVersion = 1

    /// Heads handed to evhttp so far, stand-ins included; refusals are keyed by that index.
    private var headsPassed = 0
    /// Requests evhttp has delivered to the server so far.
    private var requestsSeen = 0
    private var refusals: [Int: FramingRefusal] = [:]

    private init(server: HTTPServer, base: OpaquePointer) {
        self.server = server
        self.base = base
        maxHeadBytes = server.configuration.maxHeaderSize
        maxBodyBytes = server.configuration.maxBodySize * 4
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
        // evhttp sets the socket and makes its connection right after this callback returns:
        // check the caps then, before the loop polls again.
        let box = Unmanaged.passRetained(CallbackBox { [connectionGuard] in connectionGuard.admitFromTimer() })
        if let event = event_new(base, -1, 0, { _, _, context in
            Unmanaged<CallbackBox>.fromOpaque(context!).takeRetainedValue().body()
        }, box.toOpaque()) {
            event_active(event, Int32(EV_TIMEOUT), 0)
            // Freed on the next turn (an event may not be freed from inside its own callback
            // in every libevent build).
            server.loop.schedule(after: 0) { event_free(event) }
        } else {
            box.release()
        }
        return bev
    }

    /// The refusal evhttp's next delivered request stands in for, if any (call once per request).
    func nextRequest() -> FramingRefusal? {
        defer { requestsSeen += 1 }
        return refusals.isEmpty ? nil : refusals.removeValue(forKey: requestsSeen)
    }

    // MARK: Admission

    private func admit() -> FramingRefusal? {
        guard !admitted, let filter, let server else { return nil }
        let fd = Int32(bufferevent_getfd(filter))
        guard fd >= 0 else { return nil }
        admitted = true
        // evhttp's connection is the callback argument of its bufferevent.
        var evcon: UnsafeMutableRawPointer?
        bufferevent_getcb(filter, nil, nil, nil, &evcon)
        if let evcon { server.watchClose(OpaquePointer(evcon)) }
        var on: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        let peer = Self.peerAddress(fd) ?? "unknown"
        address = peer
        isTrustedProxy = server.configuration.trustedProxies.contains(peer)
        countedAddress = isTrustedProxy ? nil : peer
        switch server.admitConnection(address: peer, exempt: isTrustedProxy) {
        case .admitted:
            return nil
        case .overTotal(let refusal):
            return refusal
        case .overClient(let refusal):
            clientCapRefusal = refusal
            clock = .overCap
            armTimer(Self.overCapGrace)
            return nil
        }
    }

    private func admitFromTimer() {
        guard filter != nil, let refusal = admit() else { return }
        refuseLater(refusal)
    }

    private static func peerAddress(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        } == 0
        guard ok else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.ss_family) {
        case AF_INET:
            withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                }
            }
        case AF_INET6:
            withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                }
            }
        default:
            return nil
        }
        let result = String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return result.hasPrefix("::ffff:") ? String(result.dropFirst(7)) : result
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
        if length == count, passCleanHeadInPlace(input, length: length) { return }
        moving = true
        defer { moving = false }
        let kept = length - count
        guard kept > 0 else {
            // evhttp had read everything before (the usual case): frame straight back into
            // its emptied input, no buffer in between.
            evbuffer_add_buffer(pending, input)
            _ = filterInput(pending, input)
            return
        }
        let front = evbuffer_new()!
        defer { evbuffer_free(front) }
        evbuffer_remove_buffer(input, front, kept)
        evbuffer_add_buffer(pending, input)
        _ = filterInput(pending, front)
        evbuffer_add_buffer(input, front)
    }

    private func filterInput(_ source: OpaquePointer, _ destination: OpaquePointer) -> bufferevent_filter_result {
        if !admitted, let refusal = admit() { refuse(refusal, into: destination) }
        var produced = false
        loop: while evbuffer_get_length(source) > 0 {
            switch state {
            case .closed:
                evbuffer_drain(source, evbuffer_get_length(source))
            case .head:
                if readHead(source, destination) { produced = true } else { break loop }
            case .body(let remaining, let forward):
                let count = min(remaining, evbuffer_get_length(source))
                if forward { evbuffer_remove_buffer(source, destination, count) } else { evbuffer_drain(source, count) }
                produced = produced || forward
                if count == remaining {
                    state = .head
                    bodyEnded()
                } else {
                    state = .body(remaining: remaining - count, forward: forward)
                }
            case .chunked(let parsed):
                let available = min(evbuffer_get_length(source), 64 << 10)
                var bytes = [UInt8](repeating: 0, count: available)
                _ = bytes.withUnsafeMutableBytes { evbuffer_copyout(source, $0.baseAddress, available) }
                do {
                    let before = decoder?.body.count ?? 0
                    // In place (`decoder!`): the body gathered so far is never copied.
                    let used = try decoder!.feed(bytes[...])
                    evbuffer_drain(source, used)
                    let grown = (decoder?.body.count ?? 0) - before
                    if grown > 0, let server {
                        guard server.reserveBody(grown) else {
                            refuse(Self.bodyBudgetRefusal, into: destination)
                            produced = true
                            continue
                        }
                        reservedBody += grown
                    }
                    guard decoder!.isComplete else { continue }
                    let body = decoder!.body
                    decoder = nil
                    state = .head
                    bodyEnded()
                    if parsed.bodyIsRead {
                        pass(parsed.canonical(length: body.count) + body, into: destination)
                    } else {
                        pass(parsed.canonical(length: nil), into: destination)
                    }
                    produced = true
                } catch {
                    refuse(error, into: destination)
                    produced = true
                }
            }
        }
        if case .closed = state { produced = true }
        // Only a forwarded byte restarts evhttp's own read timeout: a trickled head does not.
        if produced { return BEV_OK }
        if case .head = state { return BEV_NEED_MORE }
        return BEV_OK
    }

    /// Moves head bytes from `source`; true once a whole head was handled (passed or refused).
    private func readHead(_ source: OpaquePointer, _ destination: OpaquePointer) -> Bool {
        if head.isEmpty, passCleanHead(source, destination) { return true }
        if !headClockStarted { startHeadClock() }
        // Empty lines before a request line are ignored (RFC 9112 §2.2).
        if head.isEmpty {
            var byte: UInt8 = 0
            while evbuffer_copyout(source, &byte, 1) == 1, byte == 13 || byte == 10 { evbuffer_drain(source, 1) }
            if evbuffer_get_length(source) == 0 { return false }
        }
        let available = min(evbuffer_get_length(source), maxHeadBytes + 4 - head.count)
        let scanFrom = max(0, head.count - 2)
        let oldCount = head.count
        head.append(contentsOf: repeatElement(0, count: available))
        _ = head.withUnsafeMutableBytes { evbuffer_copyout(source, $0.baseAddress! + oldCount, available) }
        guard let (contentEnd, consumed) = Self.endOfHead(head, from: scanFrom) else {
            evbuffer_drain(source, available)
            if head.count > maxHeadBytes {
                refuse(FramingRefusal(status: .requestHeaderFieldsTooLarge, detail: "The request head is larger than \(maxHeadBytes) bytes."), into: destination)
                return true
            }
            return false
        }
        evbuffer_drain(source, consumed - oldCount)
        let content = head[0..<contentEnd]
        stopHeadClock()
        guard consumed <= maxHeadBytes else {
            refuse(FramingRefusal(status: .requestHeaderFieldsTooLarge, detail: "The request head is larger than \(maxHeadBytes) bytes."), into: destination)
            return true
        }
        let result = RequestFraming.parseHead(content, maxBodyBytes: maxBodyBytes)
        head.removeAll(keepingCapacity: false)
        switch result {
        case .failure(let refusal):
            refuse(refusal, into: destination)
        case .success(let parsed):
            minorVersion = parsed.minorVersion
            if case .length(let length) = parsed.body, length > 0, parsed.bodyIsRead, !reserve(length) {
                refuse(Self.bodyBudgetRefusal, into: destination)
                return true
            }
            if parsed.expectsContinue, evbuffer_get_length(source) == 0 { sendContinue() }
            switch parsed.body {
            case .none:
                pass(parsed.canonical(length: nil), into: destination)
            case .length(let length):
                pass(parsed.canonical(length: length), into: destination)
                if length > 0 {
                    state = .body(remaining: length, forward: parsed.bodyIsRead)
                    if parsed.bodyIsRead { startBodyClock() }
                }
            case .chunked:
                decoder = ChunkedDecoder(maxBodyBytes: maxBodyBytes)
                state = .chunked(parsed)
                startBodyClock()
            }
        }
        return true
    }

    /// The fast path (`CleanHead`): a whole head at the front of `source` that is already in
    /// canonical form goes to evhttp as it is, without being copied, parsed into strings or
    /// re-serialised, and without arming the head clock (it is complete). False: the slow path
    /// decides (incomplete, refused, or to be normalised).
    private func passCleanHead(_ source: OpaquePointer, _ destination: OpaquePointer) -> Bool {
        guard let verdict = cleanHead(at: source, length: evbuffer_get_length(source)),
              reserveFor(verdict) else { return false }
        evbuffer_remove_buffer(source, destination, verdict.count)
        accept(verdict, bodyAlreadyPassed: 0)
        return true
    }

    /// The fast path without moving a byte: when the whole of evhttp's input is new (nothing
    /// kept in front) and starts with a clean head, and everything after that head is body the
    /// head announced and libevent reads, evhttp may parse the input exactly as it is — the
    /// same bytes `passCleanHead` and the body forwarding would have put back. False (nothing
    /// changed, nothing moved): the general path frames the input (a refusal, a head to
    /// normalise or not yet complete, a head not yet admitted, a second request behind the
    /// first, a body libevent does not read).
    private func passCleanHeadInPlace(_ input: OpaquePointer, length: Int) -> Bool {
        // Between heads, with nothing of a head kept: the guard's own buffer is empty then.
        guard case .head = state, admitted, head.isEmpty, evbuffer_get_length(pending) == 0,
              let verdict = cleanHead(at: input, length: length) else { return false }
        let rest = length - verdict.count
        // Bytes after the head: only as much body as the head announced, for a method whose
        // body libevent reads; anything else is framed by the general path.
        if rest > 0, !verdict.bodyIsRead || rest > verdict.bodyLength { return false }
        guard reserveFor(verdict) else { return false }
        accept(verdict, bodyAlreadyPassed: rest)
        return true
    }

    /// `CleanHead`'s verdict on the front of `buffer` (`length` bytes long): nil unless a whole
    /// head in canonical form starts it.
    private func cleanHead(at buffer: OpaquePointer, length: Int) -> CleanHead.Verdict? {
        let window = min(length, maxHeadBytes)
        guard window > 0, let start = evbuffer_pullup(buffer, window) else { return nil }
        return CleanHead.check(UnsafeRawBufferPointer(start: start, count: window),
                               maxHeadBytes: maxHeadBytes, maxBodyBytes: maxBodyBytes)
    }

    /// Book-keeping for a clean head handed to evhttp, followed by `bodyAlreadyPassed` bytes of
    /// its body.
    private func accept(_ verdict: CleanHead.Verdict, bodyAlreadyPassed: Int) {
        if headClockStarted || clock == .overCap { stopHeadClock() }
        minorVersion = verdict.minorVersion
        headsPassed += 1
        if verdict.bodyLength > bodyAlreadyPassed {
            state = .body(remaining: verdict.bodyLength - bodyAlreadyPassed, forward: verdict.bodyIsRead)
            if verdict.bodyIsRead { startBodyClock() }
        } else {
            bodyEnded()
        }
    }

    // MARK: Request bodies: a budget and a deadline

    /// A body over the server's budget for bodies being received at once.
    static let bodyBudgetRefusal = FramingRefusal(
        status: .serviceUnavailable, detail: "The server is receiving too many request bodies at once; retry shortly.")

    /// Takes `length` bytes of the server's body budget for this connection's next body.
    private func reserve(_ length: Int) -> Bool {
        guard let server, server.reserveBody(length) else { return false }
        reservedBody += length
        return true
    }

    /// The clean-head paths' reservation: true when the head announces no body libevent reads,
    /// or its body fits the budget (false: the slow path refuses it).
    private func reserveFor(_ verdict: CleanHead.Verdict) -> Bool {
        guard verdict.bodyIsRead, verdict.bodyLength > 0 else { return true }
        return reserve(verdict.bodyLength)
    }

    /// The body of the request just passed is complete (or it had none): its budget is free
    /// and its deadline stops.
    private func bodyEnded() {
        if reservedBody > 0 {
            server?.releaseBody(reservedBody)
            reservedBody = 0
        }
        if clock == .body { stopHeadClock() }
    }

    /// A body must be complete within `bodyTimeout` of its head, however slowly it trickles.
    private func startBodyClock() {
        guard bodyTimeout > 0 else { return }
        clock = .body
        armTimer(bodyTimeout)
    }

    private func bodyClockExpired() {
        guard let filter else { return }
        let refusal = FramingRefusal(status: .requestTimeout,
                                     detail: "The request body was not complete within \(bodyTimeout.formatted()) seconds of its head.")
        switch state {
        case .chunked:
            // evhttp has not seen this head (the guard gathers chunked bodies): a stand-in
            // request carries the refusal, as for a late head.
            decoder = nil
            bodyEnded()
            refuseLater(refusal)
        case .body(let remaining, true):
            // evhttp has the head and waits for `remaining` more body bytes: they are made up
            // (zeros, never read), so it delivers the request, and its answer is the refusal.
            refusals[headsPassed - 1] = refusal
            state = .closed
            bodyEnded()
            evbuffer_drain(pending, evbuffer_get_length(pending))
            guard let input = bufferevent_get_input(filter) else { return }
            moving = true
            evbuffer_unfreeze(input, 0)
            var left = remaining
            while left > 0 {
                let piece = min(left, Self.zeros.count)
                Self.zeros.withUnsafeBytes { _ = evbuffer_add(input, $0.baseAddress, piece) }
                left -= piece
            }
            evbuffer_freeze(input, 0)
            moving = false
            bufferevent_trigger(filter, Int16(EV_READ), Int32(BEV_TRIG_DEFER_CALLBACKS.rawValue))
        default:
            break
        }
    }

    private static let zeros = [UInt8](repeating: 0, count: 64 << 10)

    /// (end of the head's content including its last line's LF, bytes the head used with its
    /// empty line), searching for the empty line from `start`.
    static func endOfHead(_ bytes: [UInt8], from start: Int) -> (Int, Int)? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == 10 {
                if bytes[index + 1] == 10 { return (index + 1, index + 2) }
                if bytes[index + 1] == 13, index + 2 < bytes.count, bytes[index + 2] == 10 { return (index + 1, index + 3) }
            }
            index += 1
        }
        return nil
    }

    private func pass(_ bytes: [UInt8], into destination: OpaquePointer) {
        bytes.withUnsafeBytes { _ = evbuffer_add(destination, $0.baseAddress, $0.count) }
        headsPassed += 1
    }

    /// "100 Continue" for a client waiting before it sends its body. Sent straight to the
    /// socket: evhttp reads (so this runs) only between responses, with nothing queued, and
    /// its bufferevent does not write while evhttp reads. 25 bytes fit an empty send buffer;
    /// if they did not, the client sends its body after its own wait anyway.
    private func sendContinue() {
        guard let filter else { return }
        let fd = Int32(bufferevent_getfd(filter))
        guard fd >= 0, let output = bufferevent_get_output(filter) else { return }
        // Only once every earlier request was answered: an interim answer must never land
        // inside or ahead of an earlier one. If one is still unanswered, no "100 Continue" at
        // all — the client sends its body after its own short wait (RFC 9110 §10.1.1).
        guard requestsSeen == headsPassed, connection?.current == nil else { return }
        // Nor while an earlier answer is still being written: the line must not pass it.
        guard evbuffer_get_length(output) == 0 else { return }
        let line = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
        _ = line.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    // MARK: Refusals

    /// Hands evhttp a stand-in request for `refusal` and drops everything after it.
    private func refuse(_ refusal: FramingRefusal, into destination: OpaquePointer) {
        stopHeadClock()
        head.removeAll()
        decoder = nil
        bodyEnded()
        state = .closed
        refusals[headsPassed] = refusal
        pass(Array("GET / HTTP/1.\(minorVersion)\r\nConnection: close\r\n\r\n".utf8), into: destination)
        // Nothing after a refusal is read as a request: stop reading the socket while the
        // stand-in waits its turn, rather than read and drop whatever the client keeps sending.
        if let filter { bufferevent_setwatermark(filter, Int16(EV_READ), 0, 1) }
    }

    /// The same, from outside the filter callback (a timer): evhttp reads it as soon as it is
    /// reading, now or after the response it is writing.
    private func refuseLater(_ refusal: FramingRefusal) {
        guard let filter, let input = bufferevent_get_input(filter) else { return }
        if case .closed = state { return }
        evbuffer_drain(pending, evbuffer_get_length(pending))
        moving = true
        // The socket bufferevent freezes its input's end between reads.
        evbuffer_unfreeze(input, 0)
        refuse(refusal, into: input)
        evbuffer_freeze(input, 0)
        moving = false
        bufferevent_trigger(filter, Int16(EV_READ), Int32(BEV_TRIG_DEFER_CALLBACKS.rawValue))
    }

    // MARK: Header deadline

    private func startHeadClock() {
        headClockStarted = true
        guard headerTimeout > 0 else { return }
        clock = .head
        armTimer(headerTimeout)
    }

    private func armTimer(_ seconds: Double) {
        if timer == nil {
            timer = event_new(base, -1, 0, { _, _, context in
                guard let context else { return }
                Unmanaged<ConnectionGuard>.fromOpaque(context).takeUnretainedValue().clockExpired()
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        var interval = timeval(seconds: seconds)
        if let timer { event_add(timer, &interval) }
    }

    private func stopHeadClock() {
        headClockStarted = false
        if let timer { event_del(timer) }
    }

    private func clockExpired() {
        switch clock {
        case .head: headClockExpired()
        case .body: bodyClockExpired()
        case .overCap:
            // No head yet: refused as at accept.
            if headsPassed == 0, let refusal = clientCapRefusal { refuseLater(refusal) }
        }
    }

    private func headClockExpired() {
        guard case .head = state, headClockStarted, let filter else { return }
        // While evhttp is busy with an earlier request it does not read, so the rest of this
        // head cannot arrive: the deadline counts only time the server was listening.
        if (bufferevent_get_enabled(filter) & Int16(EV_READ)) == 0 {
            var interval = timeval(seconds: headerTimeout)
            if let timer { event_add(timer, &interval) }
            return
        }
        refuseLater(FramingRefusal(status: .requestTimeout, detail: "The request head was not complete within \(headerTimeout.formatted()) seconds of its first byte."))
    }

    // MARK: Lifetime

    /// evhttp is freeing the connection (its close callback): stop watching, release the timer.
    func closed() {
        if let timer {
            event_free(timer)
            self.timer = nil
        }
        decoder = nil
        if reservedBody > 0 {
            server?.releaseBody(reservedBody)
            reservedBody = 0
        }
        if let filter, let inputWatch { evbuffer_remove_cb_entry(bufferevent_get_input(filter), inputWatch) }
        inputWatch = nil
        filter = nil
        connection = nil
        state = .closed
    }
}

extension Double {
    /// "10" for 10.0, "2.5" for 2.5.
    fileprivate func formatted() -> String {
        self == rounded() ? String(Int(self)) : String(self)
    }
}
