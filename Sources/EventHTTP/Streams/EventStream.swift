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

    func writeNow(_ bytes: [UInt8]) {
        guard let raw = rawRequest, !bytes.isEmpty else { return }
        let buffer = evbuffer_new()
        bytes.withUnsafeBytes { _ = evbuffer_add(buffer, $0.baseAddress, $0.count) }
        evhttp_send_reply_chunk(raw, buffer)
        evbuffer_free(buffer)
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
        guard unsentBytes > maxUnsent else { return true }
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
