import CLibevent

/// An open Server-Sent-Events response. Obtain one from `Responder.startEventStream()`.
///
/// Loop-thread confined: call every member on the loop thread (the main actor when the loop
/// runs on the main thread). `Sendable` only so loop-thread code can carry it across `await`s.
///
/// Writes are pre-encoded frames (`ServerSentEvent.encoded`), so one event is encoded once for
/// any number of streams. A stream whose unsent output (server buffer + kernel send queue plus
/// live frames queued behind a paced catch-up) passes `maxUnsentBytesPerStream` is cut off;
/// `onClose` then fires, as it does exactly once however the stream stops (client gone, cut
/// off, `end()`, server shutdown).
///
/// ```swift
/// guard let stream = responder.startEventStream() else { return }
/// let cancellable = subject.sink { stream.send($0.frame) }
/// stream.onClose = { cancellable.cancel() }
/// ```
public final class EventStream: @unchecked Sendable {
    static let headHeaders: HTTPHeaders = [
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",
    ]

    private enum Item {
        case chunk([UInt8], live: Bool)
        case completion(() -> Void)
    }

    /// Strong: the stream outlives its handler; the cycle with `exchange.stream` is cut in stop().
    private let exchange: Exchange
    let connection: Connection
    private var rawRequest: RawRequest?
    private var closeWatch: OpaquePointer?
    private var queue: [Item] = []
    private var queuedLiveBytes = 0
    private var pumping = false
    private var endRequested = false
    private var retryTimer: TimerHandle?

    /// Called once when the stream stops for any reason. Set it right after starting.
    public var onClose: (() -> Void)?
    /// Whether frames can still be written.
    public private(set) var isOpen = true

    /// Pacing: write catch-up chunks while at most this much waits in the server buffer...
    private static let pacingBufferLimit = 64 << 10
    private var maxUnsent: Int { exchange.server.configuration.maxUnsentBytesPerStream }

    init(exchange: Exchange, rawRequest: RawRequest) {
        self.exchange = exchange
        self.connection = exchange.connection
        self.rawRequest = rawRequest
    }

    deinit {
        if let closeWatch { event_free(closeWatch) }
    }

    /// Output not yet acknowledged by the client: the server's buffer for this connection,
    /// the kernel's send queue, and live frames waiting behind a paced catch-up.
    public var unsentBytes: Int {
        guard isOpen else { return 0 }
        return connection.bufferedOutput + connection.kernelQueued + queuedLiveBytes
    }

    /// The bound check on the hot path. The kernel's queue is capped (see `startEventStream`),
    /// so while the server's own buffer is empty the stream cannot be over the bound and the
    /// `ioctl` that measures the kernel queue is skipped.
    private var exceedsBound: Bool {
        let buffered = connection.bufferedOutput + queuedLiveBytes
        guard buffered > 0 else { return false }
        return buffered + connection.kernelQueued > maxUnsent
    }

    /// Sends one pre-encoded frame. Returns false when the stream is closed (or was just cut
    /// off because the client is not reading).
    @discardableResult
    public func send(_ frame: [UInt8]) -> Bool {
        guard isOpen, !endRequested else { return false }
        if queue.isEmpty && !pumping {
            writeNow(frame)
        } else {
            queue.append(.chunk(frame, live: true))
            queuedLiveBytes += frame.count
        }
        return enforceBound()
    }

    /// Sends a comment line (`: text`).
    @discardableResult
    public func sendComment(_ text: String) -> Bool { send(ServerSentEvent.comment(text)) }

    /// Writes `chunks` as the client drains them, so a large snapshot or replay never trips
    /// the unsent bound by itself; `send`s made meanwhile are queued behind, in order.
    /// `completion` runs (on the loop thread) once the last chunk was handed to the socket
    /// buffer; not at all if the stream closes first.
    public func sendPaced(_ chunks: [[UInt8]], completion: (() -> Void)? = nil) {
        guard isOpen, !endRequested else { return }
        for chunk in chunks where !chunk.isEmpty { queue.append(.chunk(chunk, live: false)) }
        if let completion { queue.append(.completion(completion)) }
        if !pumping { pump() }
    }

    /// Ends the response cleanly (after anything queued), then `onClose` fires.
    public func end() {
        guard isOpen, !endRequested else { return }
        endRequested = true
        if queue.isEmpty && !pumping { finish() }
    }

    // MARK: Internals (loop thread)

    /// Writes a live frame. The fast path — nothing else waiting for this client — hands the
    /// framed bytes straight to the kernel with one `sendmsg`, instead of evhttp's buffer, write
    /// event and epoll re-arming per stream: with 10,000 streams on one key, that is the
    /// difference between one syscall and three or four per stream per event. Whatever the
    /// kernel does not take goes to the connection's output buffer, so order is kept and the
    /// unsent bound still sees it.
    func writeNow(_ bytes: [UInt8]) {
        guard let raw = rawRequest, !bytes.isEmpty else { return }
        if connection.bufferedOutput == 0, let bev = connection.bufferevent, writeDirectly(bytes, raw: raw, bev: bev) {
            return
        }
        let buffer = evbuffer_new()
        bytes.withUnsafeBytes { _ = evbuffer_add(buffer, $0.baseAddress, $0.count) }
        evhttp_send_reply_chunk(raw, buffer)
        evbuffer_free(buffer)
    }

    private static let chunkTrailer: [UInt8] = [13, 10]
    /// `SO_SNDBUF` for stream sockets (see `Exchange.startEventStream`).
    static let kernelSendBuffer = 128 << 10

    /// Returns false when the caller should use evhttp's path instead (the socket is unusable).
    private func writeDirectly(_ bytes: [UInt8], raw: RawRequest, bev: OpaquePointer) -> Bool {
        let fd = Int32(bufferevent_getfd(bev))
        guard fd >= 0 else { return false }
        let chunked = tidings_request_is_chunked(raw) != 0
        let header: [UInt8] = chunked ? Array((String(bytes.count, radix: 16) + "\r\n").utf8) : []
        let trailer: [UInt8] = chunked ? Self.chunkTrailer : []
        let total = header.count + bytes.count + trailer.count
        let sent = header.withUnsafeBytes { h in
            bytes.withUnsafeBytes { b in
                trailer.withUnsafeBytes { t in
                    tidings_send3(fd, h.baseAddress, h.count, b.baseAddress, b.count, t.baseAddress, t.count)
                }
            }
        }
        if sent == total { return true }
        if sent < 0 {
            let error = tidings_errno()
            // Anything but "kernel buffer full" means a broken socket: let evhttp find out.
            guard error == EAGAIN || error == EWOULDBLOCK || error == EINTR else { return false }
        }
        // Queue the rest behind what the kernel took; the bufferevent writes it when it can.
        var remainder = header + bytes + trailer
        remainder.removeFirst(max(0, sent))
        remainder.withUnsafeBytes { _ = bufferevent_write(bev, $0.baseAddress, $0.count) }
        return true
    }

    func heartbeat() {
        // During a paced catch-up, the catch-up itself is the traffic; a comment written now
        // would also replace evhttp's write callback that drives the pacing.
        guard isOpen, !endRequested, queue.isEmpty, !pumping else { return }
        sendComment("keep-alive")
    }

    /// Cuts the stream off when the client is not keeping up. Returns whether it is still open.
    private func enforceBound() -> Bool {
        guard isOpen else { return false }
        guard exceedsBound else { return true }
        exchange.server.logger.debug("event stream cut off: client not reading")
        stop()
        exchange.server.dropConnection(connection)
        return false
    }

    /// Writes queued items while the client keeps up; re-arms on drain.
    private func pump() {
        guard isOpen, let raw = rawRequest else { return }
        pumping = true
        var wroteSomething = false
        while let item = queue.first {
            if connection.bufferedOutput >= Self.pacingBufferLimit || connection.kernelQueued >= maxUnsent / 2 {
                break
            }
            queue.removeFirst()
            switch item {
            case .completion(let body):
                body()
                guard isOpen else { return }
            case .chunk(let bytes, let live):
                if live { queuedLiveBytes -= bytes.count }
                let buffer = evbuffer_new()
                bytes.withUnsafeBytes { _ = evbuffer_add(buffer, $0.baseAddress, $0.count) }
                // The callback fires once evhttp's output buffer has drained into the socket.
                evhttp_send_reply_chunk_with_cb(raw, buffer, { _, context in
                    guard let context else { return }
                    let stream = Unmanaged<EventStream>.fromOpaque(context).takeUnretainedValue()
                    if stream.pumping { stream.pump() }
                }, Unmanaged.passUnretained(self).toOpaque())
                evbuffer_free(buffer)
                wroteSomething = true
            }
        }
        if queue.isEmpty {
            pumping = false
            if endRequested { finish() }
            return
        }
        if !wroteSomething {
            // The kernel queue is what is full; evhttp will not call back, so look again soon.
            retryTimer?.cancel()
            retryTimer = exchange.server.loop.schedule(after: 0.01) { [weak self] in self?.pump() }
        }
    }

    /// Writes the terminating chunk and lets evhttp finish the response.
    private func finish() {
        guard isOpen, let raw = rawRequest else { return }
        stop()
        exchange.rawRequest = nil
        exchange.state = .answered
        connection.current = nil
        evhttp_send_reply_end(raw)
    }

    /// The connection closed under the stream (closecb): evhttp or the exchange frees the request.
    func connectionClosed() {
        stop()
    }

    /// Marks the stream closed once, releases the watch and timers, tells the owner.
    private func stop() {
        guard isOpen else { return }
        isOpen = false
        rawRequest = nil
        queue.removeAll()
        queuedLiveBytes = 0
        pumping = false
        retryTimer?.cancel()
        retryTimer = nil
        if let closeWatch {
            event_free(closeWatch)
            self.closeWatch = nil
        }
        exchange.stream = nil
        exchange.server.streamStopped(self)
        let onClose = self.onClose
        self.onClose = nil
        onClose?()
    }

    /// evhttp notices a vanished client only when it next writes; watch the socket for the
    /// peer's FIN/RST ourselves so a quiet stream is released at once.
    func watchForClose(base: OpaquePointer) {
        let fd = connection.fd
        guard fd >= 0 else { return }
        let earlyClose = (event_base_get_features(base) & Int32(EV_FEATURE_EARLY_CLOSE.rawValue)) != 0
        let what = Int16(earlyClose ? EV_CLOSED : EV_READ) | Int16(EV_PERSIST)
        let context = Unmanaged.passUnretained(self).toOpaque()
        closeWatch = event_new(base, fd, what, { fd, what, context in
            guard let context else { return }
            Unmanaged<EventStream>.fromOpaque(context).takeUnretainedValue().socketActivity(fd: fd, what: what)
        }, context)
        event_add(closeWatch, nil)
    }

    private func socketActivity(fd: Int32, what: Int16) {
        let closed = (what & Int16(EV_CLOSED)) != 0 || tidings_socket_peer_closed(fd) != 0
        if closed {
            stop()
            exchange.server.dropConnection(connection)
        } else if let closeWatch {
            // The client sent bytes on a stream (not expected): stop watching rather than spin;
            // the heartbeat's write still detects a dead peer.
            event_free(closeWatch)
            self.closeWatch = nil
        }
    }
}
