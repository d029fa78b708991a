internal import CLibevent
import HTTPTypes
import Foundation
import Logging

/// The hand-off of event streams from their connections to the stream workers (loop thread).
extension HTTPServer {
    /// Workers to start: the configured number, or one per core but one (at least one), so the
    /// request loop keeps a core of its own while the workers fan out: on 2 cores, with a worker
    /// per core, `GET /healthz` waited 10–19 ms (p99) during a 10,000-stream fan-out; with one
    /// worker 3–4 ms, and delivery stayed well inside its goal (p99 62–69 ms).
    var streamWorkerCount: Int {
        configuration.streamWorkers > 0 ? configuration.streamWorkers : max(1, ProcessInfo.processInfo.activeProcessorCount - 1)
    }

    func startStreamWorkers() throws {
        let receiver = loop.addReceiver { [weak self] message in
            switch message as? StreamNotices.Notice {
            case .closed(let id): self?.workerClosedStream(id)
            case .reached(let id, let marker): self?.workerReachedMarker(id, marker: marker)
            case nil: break
            }
        }
        noticeReceiver = receiver
        let notices = StreamNotices(loop: loop, receiver: receiver)
        dispatch = try StreamDispatch(base: loop.base, count: streamWorkerCount, notices: notices,
                                      heartbeatInterval: configuration.heartbeatInterval, compression: streamCompression)
        fanOuts.insert(WorkerFanOut(server: self), at: 0)
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
        if let noticeReceiver { loop.removeReceiver(noticeReceiver) }
        noticeReceiver = nil
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
        for fanOut in fanOuts { fanOut.broadcast(frame, topic: topic, order: order, conflationKey: conflationKey) }
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

    /// Turns `connection` into an event stream: a worker gets the stream now (frames sent from
    /// now on queue there, in order) and writes `head` and then the frames; the connection's
    /// socket follows once the answers written before it have left (`detach`).
    func handOffStream(_ connection: Connection, request: Request, minorVersion: Int, head: Response,
                       retryMilliseconds: Int, conflate: Bool, keyOf: (([UInt8]) -> String?)?) -> EventStream {
        let dispatch = dispatch!
        let client = request.clientAddress
        let chunked = minorVersion >= 1
        let id = nextStreamID
        nextStreamID += 1
        let workerIndex = dispatch.assign()
        // gzip when the response filters said so (`HTTPCaching`: the request accepts it).
        let gzip = head.headers.first(.contentEncoding) == "gzip"
        let remote = WorkerStream(id: id, chunked: chunked, conflates: conflate, limits: streamLimits, gzip: gzip,
                                  worker: dispatch.workers[workerIndex])
        let stream = EventStream(id: id, workerIndex: workerIndex,
                                 sink: remote,
                                 server: self, keyOf: conflate ? keyOf : nil)
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
        // The stream keeps its client's connection slot (counted from accept) until it closes.
        stream.clientAddress = connection.countedAddress
        stream.holdsConnectionSlot = true
        connection.becomeStream(StreamHandOff(remote: remote, worker: workerIndex, server: self))
        return stream
    }

    /// The connection's earlier answers are written: its bufferevent is gone (the socket stays
    /// open), and on the loop's next turn — once the loop polled, so its batched `epoll_ctl`
    /// removal (see `EventLoop`) reached the kernel while the descriptor still named this
    /// socket — the descriptor goes to the worker.
    func detach(_ connection: Connection, to handOff: StreamHandOff) {
        let fd = connection.releaseForStream()
        // Cap what the kernel may queue for this client (Linux doubles it), so the bound is
        // mostly our own queue and a reader's in-flight kernel bytes stay well under it.
        let bound = configuration.maxUnsentBytesPerStream
        var sendBuffer = Int32(min(128 << 10, max(4 << 10, bound / 4)))
        syscall("setsockopt SO_SNDBUF", tolerating: "the bound still holds, in the stream's own queue") {
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sendBuffer, socklen_t(MemoryLayout<Int32>.size))
        }
        loop.schedule(after: 0) { [weak self] in
            guard let self, let dispatch else {
                syscall("close", tolerating: "the descriptor is gone either way") { Foundation.close(fd) }
                return
            }
            dispatch.enqueue(.socket(handOff.remote, fd: fd), to: handOff.worker)
        }
    }

    /// The status line and headers a worker writes: chunked for HTTP/1.1, close-delimited for
    /// HTTP/1.0; `Connection: close` either way (the socket never returns to a connection).
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
