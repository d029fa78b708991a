internal import CLibevent
import HTTPTypes
import Foundation
import Logging

/// The hand-off of event streams from evhttp to the stream workers (loop thread).
extension HTTPServer {
    /// Workers to start: the configured number, or one per core but one (at least one), so the
    /// request loop keeps a core of its own while the workers fan out: on 2 cores, with a worker
    /// per core, `GET /healthz` waited 10–19 ms (p99) during a 10,000-stream fan-out; with one
    /// worker 3–4 ms, and delivery stayed well inside its goal (p99 62–69 ms).
    var streamWorkerCount: Int {
        configuration.streamWorkers > 0 ? configuration.streamWorkers : max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
    }

    func startStreamWorkers() throws {
        do {
            placeholderDescriptor = try SocketCalls.openPlaceholder()
        } catch {
            throw EventHTTPError.libevent("\(error)")
        }
        let notices = StreamNotices(loop: loop, server: self)
        dispatch = try StreamDispatch(base: loop.base, count: streamWorkerCount, notices: notices,
                                      heartbeatInterval: configuration.heartbeatInterval, compression: streamCompression)
    }

    /// Every stream still open sees `onClose`; the workers close their sockets and end.
    func stopStreamWorkers() {
        let open = Array(streams.values)
        streams.removeAll()
        for stream in open {
            forget(stream)
            stream.stop()
        }
        dispatch?.stop()
        dispatch = nil
        if placeholderDescriptor >= 0 { Foundation.close(placeholderDescriptor) }
        placeholderDescriptor = -1
    }

    /// Queues `frame` on every open stream that follows `topic` (`EventStream.follow`) and last
    /// took a frame of lower `order`; its order becomes `order`. On a conflating stream
    /// `conflationKey` acts as in `EventStream.send(_:conflationKey:)`.
    ///
    /// This is the fan-out for many streams: the loop posts one command per stream worker,
    /// whatever the number of streams, and each worker walks its own followers. Loop thread only.
    /// While gzip streams are open the frame travels with a `SharedPiece`: the first worker with
    /// a gzip follower deflates it, once, for every gzip follower on every worker.
    public func broadcast(_ frame: [UInt8], topic: Int, order: UInt64, conflationKey: String? = nil) {
        guard !frame.isEmpty else { return }
        if !router.inProcessStreams.isEmpty {
            for stream in Array(router.inProcessStreams.values) { stream.take(frame, topic: topic, order: order) }
        }
        guard let dispatch else { return }
        let shared = gzipStreamCount > 0 ? SharedPiece(frame) : nil
        dispatch.enqueueAll(.broadcast(topic: topic, frame: frame, order: order, key: conflationKey, shared: shared))
    }

    /// Whether another stream fits: under `streamLimit` in all, and under the per-client share
    /// (`maxConnectionsPerClient`) for `client`.
    func hasRoomForStream(client: String?) -> Bool {
        guard streams.count < streamLimit else { return false }
        let share = configuration.maxConnectionsPerClient
        guard share > 0, let client else { return true }
        return streamsByClient[client, default: 0] < share
    }

    /// `base` (default: the configured `streamRetryMilliseconds`) ± `retryJitter`, drawn anew
    /// for each stream.
    func jitteredRetry(around base: Int? = nil) -> Int {
        let center = max(0, base ?? configuration.streamRetryMilliseconds)
        let spread = Int(Double(center) * min(1, max(0, configuration.retryJitter)))
        return spread > 0 ? Int.random(in: (center - spread)...(center + spread)) : center
    }

    /// What a stream the server has no room for gets: 200 (a browser's `EventSource` gives up
    /// for good on anything else), a jittered `retry:`, and the end.
    func streamRefusal() -> Response {
        var head = Response(status: .ok, headers: EventStream.headHeaders)
        head.headers[.connection] = "close"
        head.body = ServerSentEvent.retry(milliseconds: jitteredRetry())
        return head
    }

    private func forget(_ stream: EventStream) {
        if stream.isGzip { gzipStreamCount -= 1 }
        if stream.holdsConnectionSlot { limiter.closed(address: stream.clientAddress) }
        if let client = stream.client, let count = streamsByClient[client] {
            if count <= 1 { streamsByClient.removeValue(forKey: client) } else { streamsByClient[client] = count - 1 }
        }
    }

    func workerClosedStream(_ id: Int) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        dispatch?.release(stream.workerIndex)
        forget(stream)
        stream.stop()
        if isDraining { checkShutdown() }
    }

    func workerReachedMarker(_ id: Int, marker: Int) {
        streams[id]?.markerReached(marker)
    }

    /// Takes the connection's socket away from evhttp and gives it to a worker, which writes
    /// `head` and then the frames. Returns nil when the socket cannot leave (the caller answers
    /// through evhttp instead).
    ///
    /// In two steps. Now: every libevent event on the socket is turned off and the worker gets
    /// the stream (frames sent from now on queue there, in order). On the next loop turn — once
    /// the loop polled, so the batched `epoll_ctl` removals (see `EventLoop`) reached the kernel
    /// while the descriptor still named the socket — the socket is moved to a new descriptor
    /// for the worker and a placeholder takes its old number, which evhttp then closes.
    func handOffStream(_ exchange: ConnectionExchange, request: Request, raw: RawRequest, head: Response,
                       retryMilliseconds: Int, conflate: Bool, keyOf: (([UInt8]) -> String?)?) -> EventStream? {
        let connection = exchange.connection
        let client = request.clientAddress
        guard let dispatch, let bev = connection.bufferevent, bufferevent_getfd(bev) >= 0 else { return nil }
        // The connection's bufferevent may be a filter over the socket's own (a guard that
        // checks request framing, say): handle the whole chain, the socket's level first.
        var chain: [OpaquePointer] = [bev]
        while let below = bufferevent_get_underlying(chain[chain.count - 1]), chain.count < 8 { chain.append(below) }
        for level in chain { bufferevent_disable(level, Int16(EV_READ | EV_WRITE)) }

        let chunked = Self.version(of: raw) >= 11
        let id = nextStreamID
        nextStreamID += 1
        let workerIndex = dispatch.assign()
        // gzip when the response filters said so (`HTTPCaching`: the request accepts it).
        let gzip = head.headers.first(.contentEncoding) == "gzip"
        let remote = WorkerStream(id: id, chunked: chunked, conflates: conflate,
                                  bound: configuration.maxUnsentBytesPerStream, gzip: gzip,
                                  catchUpDeadline: configuration.catchUpDeadline,
                                  catchUpBytesPerSecond: configuration.catchUpMinimumBytesPerSecond,
                                  worker: dispatch.workers[workerIndex])
        let stream = EventStream(id: id, workerIndex: workerIndex, remote: remote, server: self,
                                 keyOf: conflate ? keyOf : nil)
        streams[id] = stream
        if gzip {
            stream.isGzip = true
            gzipStreamCount += 1
        }
        if let client {
            stream.client = client
            streamsByClient[client, default: 0] += 1
        }
        dispatch.enqueue(.open(remote, head: Self.streamHead(head, chunked: chunked)), to: workerIndex)
        if configuration.streamPadding > 0 {
            dispatch.enqueue(.frame(remote, ServerSentEvent.padding(bytes: configuration.streamPadding), key: nil, live: false),
                             to: workerIndex)
        }
        dispatch.enqueue(.frame(remote, ServerSentEvent.retry(milliseconds: retryMilliseconds), key: nil, live: false),
                         to: workerIndex)
        // The stream keeps its client's connection slot (counted from accept) until it closes;
        // its guard's timers and watches end now.
        if let connectionGuard = guards.removeValue(forKey: bev) {
            stream.clientAddress = connectionGuard.address
            stream.holdsConnectionSlot = true
            connectionGuard.closed()
        }
        loop.schedule(after: 0) { [weak self] in
            guard let self else { return }
            moveSocket(of: connection, chain: chain, to: remote, worker: workerIndex) {
                exchange.refuseAfterHandOff(raw, request: request)
            }
        }
        return stream
    }

    /// The hand-off's second step (see `handOffStream`).
    private func moveSocket(of connection: Connection, chain: [OpaquePointer], to remote: WorkerStream, worker: Int,
                            refuse: () -> Void) {
        guard let dispatch else { return }
        // Freed meanwhile (the server closing): the worker drops the stream.
        guard connections[connection.evcon] === connection, let bev = connection.bufferevent, bev == chain[0] else {
            dispatch.enqueue(.socket(remote, fd: -1, prefix: []), to: worker)
            return
        }
        let fd = Int32(bufferevent_getfd(bev))
        // Whatever evhttp still holds for this client goes first, the lowest level's first
        // (normally nothing: evhttp reads a request only once the previous answer was written).
        var pending: [UInt8] = []
        for level in chain.reversed() {
            guard let output = bufferevent_get_output(level) else { continue }
            let length = evbuffer_get_length(output)
            guard length > 0 else { continue }
            pending += [UInt8](unsafeUninitializedCapacity: length) { storage, count in
                count = max(0, Int(evbuffer_copyout(output, storage.baseAddress, length)))
            }
        }
        let owned: Int32
        do {
            guard fd >= 0 else { throw SystemError(call: "bufferevent_getfd", code: EBADF) }
            owned = try SocketCalls.detachSocket(fd, placeholder: placeholderDescriptor)
        } catch {
            // Out of descriptors: answered as a full server answers (200, a `retry:`, the end),
            // through evhttp, which still holds the request; the worker drops the stream.
            logger.warning("event stream not handed off: \(error)")
            dispatch.enqueue(.socket(remote, fd: -1, prefix: []), to: worker)
            refuse()
            return
        }
        // Cap what the kernel may queue for this client (Linux doubles it), so the bound is
        // mostly our own queue and a reader's in-flight kernel bytes stay well under it.
        let bound = configuration.maxUnsentBytesPerStream
        var sendBuffer = Int32(min(128 << 10, max(4 << 10, bound / 4)))
        syscall("setsockopt SO_SNDBUF", tolerating: "the bound still holds, in the stream's own queue") {
            setsockopt(owned, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        }
        var on: Int32 = 1
        syscall("setsockopt TCP_NODELAY", tolerating: "it only lowers latency") {
            setsockopt(owned, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        dispatch.enqueue(.socket(remote, fd: owned, prefix: pending), to: worker)
        // evhttp frees its connection (and the request) on a later turn; it closes only the
        // placeholder now sitting under the old number.
        dropConnection(connection)
    }

    /// The status line and headers a worker writes: chunked for HTTP/1.1, close-delimited for
    /// HTTP/1.0; `Connection: close` either way (the socket never returns to evhttp).
    static func streamHead(_ head: Response, chunked: Bool) -> [UInt8] {
        var text = chunked ? "HTTP/1.1 200 OK\r\n" : "HTTP/1.0 200 OK\r\n"
        for field in head.allHeaders where ![.connection, .contentLength, .transferEncoding, .date].contains(field.name) {
            // Values come from our filters, but a CR or LF must never split a header.
            guard !field.value.utf8.contains(where: { $0 == 13 || $0 == 10 }) else { continue }
            text += "\(field.name.rawName): \(field.value)\r\n"
        }
        text += "Date: \(SocketCalls.httpDate())\r\n"
        if chunked { text += "Transfer-Encoding: chunked\r\n" }
        text += "Connection: close\r\n\r\n"
        return Array(text.utf8)
    }
}
