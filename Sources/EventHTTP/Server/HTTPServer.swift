internal import CLibevent
import HTTPTypes
import Foundation
public import Logging

/// An HTTP/1.1 server on libevent's evhttp, running on one `EventLoop`.
///
/// Loop-thread confined: create it, `start()` it, and call everything else on the loop thread
/// (before `run()` counts). Handlers and filters run on the loop thread.
///
/// ```swift
/// let loop = try EventLoop()
/// let server = HTTPServer(loop: loop, configuration: .init(host: "127.0.0.1", port: 0))
/// server.router.get("/healthz") { _, responder in responder.send(.json(["status": "ok"])) }
/// let port = try server.start()
/// loop.run()
/// ```
public final class HTTPServer {
    public let loop: EventLoop
    public let router: Router
    public let configuration: ServerConfiguration
    public var logger: Logger

    private var http: OpaquePointer?
    private var boundSocket: OpaquePointer?
    private let scratch: OpaquePointer
    var connections: [OpaquePointer: Connection] = [:]
    /// Open streams by id; their sockets belong to the stream workers.
    var streams: [Int: EventStream] = [:]
    /// The budget for request bodies being received at once (`maxBufferedBodyBytes`).
    let bodyBudget: BodyBudget
    /// Bytes of request bodies being received now.
    var bufferedBodyBytes: Int { bodyBudget.used }
    /// The per-client refusal log's rate gate (see `admitConnection`).
    var nextRefusalLog: UInt64 = 0
    var refusalsSinceLog = 0
    /// Open streams per client (the peer, or the client a trusted proxy named).
    var streamsByClient: [String: Int] = [:]
    var nextStreamID = 0
    /// The stream workers (from `start()` until `close()`).
    var dispatch: StreamDispatch?
    /// Open gzip streams (a broadcast makes a shared piece only while there are some).
    var gzipStreamCount = 0
    /// What gzip event streams cost in compressions (for metrics and tests).
    public let streamCompression = StreamCompressionCounters()
    /// An open /dev/null, duplicated onto a stream's old descriptor number (see `detachSocket`).
    var placeholderDescriptor: Int32 = -1
    /// Every accepted connection's guard, by its bufferevent (see `ConnectionGuard`).
    var guards: [OpaquePointer: ConnectionGuard] = [:]
    /// Open connections, counted from accept, in total and per client address.
    var limiter = ConnectionLimiter(total: 0, perClient: 0)
    private var inFlight = 0
    private var shutdownCompletion: (() -> Void)?
    private var shutdownPoll: TimerHandle?
    private var shutdownDeadline: UInt64 = 0
    private var dateCache: (second: Int, text: String) = (-1, "")

    /// The bound port once started (0 before).
    public private(set) var port = 0
    /// True once `beginShutdown` was called: no new connections, streams refused.
    public private(set) var isDraining = false
    /// Event streams currently open.
    public var openStreamCount: Int { streams.count }
    /// Connections accepted and still open (whether or not they sent a request yet).
    public var openConnectionCount: Int { limiter.open }

    public init(loop: EventLoop, configuration: ServerConfiguration = ServerConfiguration(),
                router: Router = Router(), logger: Logger = Logger(label: "EventHTTP")) {
        self.loop = loop
        self.configuration = configuration
        self.router = router
        self.logger = logger
        bodyBudget = BodyBudget(limit: configuration.maxBufferedBodyBytes)
        scratch = evbuffer_new()
    }

    deinit {
        close()
        evbuffer_free(scratch)
    }

    /// Binds, listens and starts serving; returns the bound port (useful with port 0).
    /// Also raises the process's open-file limit to its hard limit.
    public func start() throws -> Int {
        precondition(http == nil, "start() called twice")
        let descriptors = Self.raiseOpenFileLimit()
        descriptorLimit = descriptors
        let limits = Self.limits(configuration, descriptors: descriptors)
        connectionLimit = limits.connections
        streamLimit = limits.streams
        limiter = ConnectionLimiter(total: connectionLimit, perClient: configuration.maxConnectionsPerClient)
        // A write to a vanished client must be an EPIPE error, not a process-killing signal.
        signal(SIGPIPE, SIG_IGN)
        guard let http = evhttp_new(loop.base) else { throw EventHTTPError.libevent("evhttp_new") }
        self.http = http
        let all = EVHTTP_REQ_GET.rawValue | EVHTTP_REQ_HEAD.rawValue | EVHTTP_REQ_POST.rawValue
            | EVHTTP_REQ_PUT.rawValue | EVHTTP_REQ_PATCH.rawValue | EVHTTP_REQ_DELETE.rawValue
            | EVHTTP_REQ_OPTIONS.rawValue | EVHTTP_REQ_TRACE.rawValue | EVHTTP_REQ_CONNECT.rawValue
        evhttp_set_allowed_methods(http, UInt16(all))
        // Bodies between the limit and 4x get the router's 413 problem (after the route and
        // filters had their say); beyond that the connection guard refuses them at the head, so
        // a huge upload never sits in memory.
        evhttp_set_max_body_size(http, configuration.maxBodySize * 4)
        // The guard enforces maxHeaderSize on what the client sent; the head it re-serialises
        // for evhttp may be a little longer (bare LF line ends become CRLF).
        evhttp_set_max_headers_size(http, configuration.maxHeaderSize * 2 + 64)
        installConnectionGuards(http)
        var timeout = timeval(seconds: min(configuration.idleTimeout, configuration.readTimeout))
        evhttp_set_timeout_tv(http, &timeout)
        evhttp_set_gencb(http, { raw, context in
            guard let raw, let context else { return }
            Unmanaged<HTTPServer>.fromOpaque(context).takeUnretainedValue().handle(raw)
        }, Unmanaged.passUnretained(self).toOpaque())

        let listener = try makeListener()
        guard let bound = evhttp_bind_listener(http, listener) else {
            evconnlistener_free(listener)
            throw EventHTTPError.libevent("evhttp_bind_listener")
        }
        boundSocket = bound
        port = Self.localPort(of: evconnlistener_get_fd(listener))
        try startStreamWorkers()
        return port
    }

    /// Our own listening socket: a large backlog (evhttp_bind_socket uses 128), and accept
    /// errors such as EMFILE pause accepting briefly instead of spinning.
    private func makeListener() throws -> OpaquePointer {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        var result: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(configuration.host, String(configuration.port), &hints, &result)
        guard status == 0, let first = result else {
            throw EventHTTPError.bind(host: configuration.host, port: configuration.port,
                                      reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(result) }
        let flags = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC | LEV_OPT_REUSEABLE
        guard let listener = evconnlistener_new_bind(loop.base, nil, nil, flags,
                                                     configuration.listenBacklog,
                                                     first.pointee.ai_addr, Int32(first.pointee.ai_addrlen)) else {
            throw EventHTTPError.bind(host: configuration.host, port: configuration.port,
                                      reason: SystemError.last("evconnlistener_new_bind").reason)
        }
        evconnlistener_set_error_cb(listener) { listener, _ in
            // Out of descriptors (or similar): stop accepting for 100 ms rather than spin on a
            // readable listening socket.
            guard let listener else { return }
            evconnlistener_disable(listener)
            var pause = timeval(tv_sec: 0, tv_usec: 100_000)
            event_base_once(evconnlistener_get_base(listener), -1, Int16(EV_TIMEOUT), { _, _, context in
                if let context { evconnlistener_enable(OpaquePointer(context)) }
            }, UnsafeMutableRawPointer(listener), &pause)
        }
        return listener
    }

    private static func localPort(of fd: Int32) -> Int {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let ok = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        } == 0
        guard ok else { return 0 }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin_port)) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { Int(UInt16(bigEndian: $0.pointee.sin6_port)) }
            }
        default: return 0
        }
    }

    /// Raises RLIMIT_NOFILE's soft limit to the hard limit (each connection is a descriptor);
    /// returns the soft limit in force afterwards.
    @discardableResult
    public static func raiseOpenFileLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            let wanted = limit.rlim_max
            limit.rlim_cur = wanted
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 { _ = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
        }
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }

    /// Connections accepted at once (`maxConnections`, bounded by the open-file limit).
    public private(set) var connectionLimit = 0
    /// Streams open at once (`maxStreams`, leaving `reservedConnections` for plain requests).
    public private(set) var streamLimit = 0
    /// The descriptor limit in force when the server started (`RLIMIT_NOFILE`'s soft limit).
    public private(set) var descriptorLimit = 0
    /// Streams refused since start because the server had no room for them (`maxStreams`,
    /// the per-client share, or no descriptor at the hand-off); each got 200, `retry:`, end.
    public internal(set) var streamsShed = 0

    /// The connection and stream limits for `descriptors` open files: every connection is a
    /// descriptor, and some stay for the listener, the store, logs and the stream hand-off;
    /// streams take at most 90% of the descriptors (at least 256), and never the last
    /// `reservedConnections` connections.
    static func limits(_ configuration: ServerConfiguration, descriptors: Int) -> (connections: Int, streams: Int) {
        let connections = min(configuration.maxConnections ?? Int.max, max(64, descriptors - 64))
        let wanted = configuration.maxStreams ?? max(256, descriptors - descriptors / 10)
        let streams = min(wanted, max(1, connections - configuration.reservedConnections))
        return (connections, streams)
    }

    // MARK: Requests

    private func handle(_ raw: RawRequest) {
        guard let evcon = evhttp_request_get_connection(raw) else { return }
        // One lookup per request: the guard keeps the connection's record once it has one.
        let connectionGuard = evhttp_connection_get_bufferevent(evcon).flatMap { guards[$0] }
        if let refusal = connectionGuard?.nextRequest() {
            writeFramingRefusal(refusal, to: raw)
            return
        }
        if let refusal = connectionGuard?.clientCapRefusal {
            writeClientCapRefusal(refusal, to: raw, headers: Self.headers(of: raw))
            return
        }
        let connection: Connection
        if let known = connectionGuard?.connection ?? connections[evcon] {
            connection = known
        } else {
            if isDraining {
                writeRefusal(raw)
                return
            }
            connection = Connection(evcon: evcon)
            connections[evcon] = connection
            connectionGuard?.connection = connection
            watchClose(evcon)
        }
        guard let method = HTTPRequest.Method(evhttp_request_get_command(raw)) else {
            write(Response.problem(status: .notImplemented, detail: "This method is not implemented."), to: raw, method: .get)
            return
        }
        var request = Request(method: method, target: Self.target(of: raw),
                              headers: Self.headers(of: raw), body: Self.body(of: raw),
                              receivedAt: DispatchTime.now().uptimeNanoseconds)
        if let connectionGuard, let peer = connectionGuard.address {
            request.clientAddress = connectionGuard.isTrustedProxy
                ? configuration.trustedProxies.client(peer: peer, headers: request.headers) : peer
        }
        let responder = Responder(server: self, connection: connection, rawRequest: raw, request: request)
        connection.current = responder
        inFlight += 1
        if let problem = HostField.problem(version: tidings_request_version(raw), headers: request.headers) {
            responder.send(.problem(status: .badRequest, detail: problem))
            return
        }
        guard request.hasWellFormedQuery else {
            responder.send(.problem(status: .badRequest, detail: "The query string has a broken percent-escape or is not UTF-8."))
            return
        }
        // The router answers 413 after the route and the request filters (e.g. 401) had their say.
        let limit = configuration.maxBodySize
        router.handle(request, responder, bodyLimitExceeded: request.body.count > limit ? limit : nil)
    }

    /// 503 for a connection over the cap (or arriving while draining), then close.
    private func writeRefusal(_ raw: RawRequest) {
        var response = Response.problem(status: .serviceUnavailable, detail: isDraining ? "The server is shutting down." : "The server is at its connection limit; retry shortly.",
                                        headers: [.retryAfter: "2", .connection: "close"])
        response.headers[.connection] = "close"
        write(response, to: raw, method: .get)
    }

    private static func target(of raw: RawRequest) -> String {
        guard let uri = evhttp_request_get_uri(raw) else { return "/" }
        let target = String(cString: uri)
        if target.utf8.first == UInt8(ascii: "/") { return target }
        // Absolute form (`GET http://host/path`): keep path and query only.
        if let parsed = evhttp_request_get_evhttp_uri(raw) {
            var result = evhttp_uri_get_path(parsed).map { String(cString: $0) } ?? "/"
            if result.isEmpty { result = "/" }
            if let query = evhttp_uri_get_query(parsed) { result += "?" + String(cString: query) }
            return result
        }
        return target
    }

    private static func headers(of raw: RawRequest) -> HTTPFields {
        // `HTTPFields()`, not `[:]`: the dictionary-literal initializer is not inlined.
        var headers = HTTPFields()
        guard let list = evhttp_request_get_input_headers(raw) else { return headers }
        // One allocation for the fields instead of growing by doubling (a single field gets
        // exactly one from its append anyway).
        var count = 0
        var counted = list.pointee.tqh_first
        while let current = counted { count += 1; counted = current.pointee.next.tqe_next }
        if count > 1 { headers.reserveCapacity(count) }
        var entry = list.pointee.tqh_first
        while let current = entry {
            // The connection guard let only token names through; a name that is not one is dropped.
            if let key = current.pointee.key, let value = current.pointee.value,
               let name = KnownFieldNames.name(key) {
                headers.append(HTTPField(name: name, value: String(cString: value)))
            }
            entry = current.pointee.next.tqe_next
        }
        return headers
    }

    private static func body(of raw: RawRequest) -> [UInt8] {
        guard let buffer = evhttp_request_get_input_buffer(raw) else { return [] }
        let length = evbuffer_get_length(buffer)
        guard length > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: length) { storage, count in
            count = max(0, Int(evbuffer_copyout(buffer, storage.baseAddress, length)))
        }
    }

    // MARK: Responses

    func applyResponseFilters(_ request: Request, _ response: inout Response) {
        router.finish(request, &response)
        if isDraining || Self.leavesBodyUnread(request) { response.headers[.connection] = "close" }
    }

    /// libevent reads a request body only for POST, PUT and PATCH (2.1.12 also OPTIONS). A body
    /// announced on any other method stays in the input buffer and would be parsed as the next
    /// request on the connection (a desync: `HEAD / ...Content-Length: 17` + 17 bytes turns
    /// into a bogus request line). Such a request is answered and the connection closed.
    private static let transferEncodingLength = HTTPField.Name.transferEncoding.canonicalName.utf8.count
    private static let contentLengthLength = HTTPField.Name.contentLength.canonicalName.utf8.count

    static func leavesBodyUnread(_ request: Request) -> Bool {
        // By slot: matching `.post, .put, …` compares the method's name with each in turn.
        if let slot = request.method.servedIndex, readsBody[slot] { return false }
        // Names are compared only when their lengths match (most fields' do not).
        var length: String?
        for field in request.headers {
            let name = field.name
            switch name.canonicalName.utf8.count {
            case transferEncodingLength where name == .transferEncoding: return true
            case contentLengthLength where length == nil && name == .contentLength: length = field.value
            default: continue
            }
        }
        guard let length else { return false }
        return length.trimmingCharacters(in: .whitespaces) != "0"
    }

    /// By served-method slot: whether libevent reads that method's body.
    private static let readsBody = HTTPRequest.Method.served.map { [.post, .put, .patch, .options].contains($0) }

    /// Hands a complete response to evhttp (which adds Date and, for bodies, Content-Length).
    func write(_ response: Response, to raw: RawRequest, method: HTTPRequest.Method) {
        let output = evhttp_request_get_output_headers(raw)
        var hasDate = false
        for field in response.headers {
            Self.add(field, to: output)
            if !hasDate, field.name == .date { hasDate = true }
        }
        for field in response.addedFields {
            Self.add(field, to: output)
            if !hasDate, field.name == .date { hasDate = true }
        }
        // evhttp formats Date for every response; the same text serves a whole second.
        if !hasDate { _ = responseDate.withCString { evhttp_add_header(output, "Date", $0) } }
        let status = response.status
        let hasNoBody = status.forbidsBody
        if method == .head {
            if !hasNoBody && !response.headers.contains(.contentLength) {
                _ = evhttp_add_header(output, "Content-Length", String(response.body.count))
            }
            status.phrase.withCString { evhttp_send_reply(raw, Int32(status.code), $0, nil) }
            return
        }
        if !hasNoBody && !response.body.isEmpty {
            response.body.withUnsafeBytes { _ = evbuffer_add(scratch, $0.baseAddress, $0.count) }
            status.phrase.withCString { evhttp_send_reply(raw, Int32(status.code), $0, scratch) }
            evbuffer_drain(scratch, evbuffer_get_length(scratch))
        } else {
            status.phrase.withCString { evhttp_send_reply(raw, Int32(status.code), $0, nil) }
        }
    }

    private static func add(_ field: HTTPField, to output: UnsafeMutablePointer<evkeyvalq>?) {
        // evhttp_add_header refuses CR/LF in values, so no header can be injected. Explicit
        // withCString: the implicit String-to-pointer conversion allocates a copy per argument
        // (utf8CString), several per response.
        field.name.rawName.withCString { name in
            field.value.withCString { value in _ = evhttp_add_header(output, name, value) }
        }
    }

    /// `Date:` text for the current second, formatted once per second.
    private var responseDate: String {
        let now = time(nil)
        if now != dateCache.second {
            var text = [CChar](repeating: 0, count: 32)
            tidings_http_date(&text)
            dateCache = (now, String(cString: text))
        }
        return dateCache.text
    }

    func exchangeFinished() {
        inFlight -= 1
        if shutdownCompletion != nil { checkShutdown() }
    }

    func connectionClosed(_ evcon: OpaquePointer) {
        releaseGuard(evcon)
        guard let connection = connections.removeValue(forKey: evcon) else { return }
        let exchange = connection.current
        connection.current = nil
        exchange?.connectionClosed()
    }

    // MARK: Streams

    /// Frees a connection on a later loop turn (never from inside evhttp's own callbacks).
    func dropConnection(_ connection: Connection) {
        let box = Unmanaged.passRetained(CallbackBox { [weak self, connection] in
            // Only if it is still ours: evhttp may have freed it meanwhile.
            guard let self, self.connections[connection.evcon] === connection else { return }
            evhttp_connection_free(connection.evcon)
            // The close callback normally removed it; never keep a freed evcon as a key.
            self.connections.removeValue(forKey: connection.evcon)
        })
        var now = timeval(tv_sec: 0, tv_usec: 0)
        event_base_once(loop.base, -1, Int16(EV_TIMEOUT), { _, _, context in
            let box = Unmanaged<CallbackBox>.fromOpaque(context!).takeRetainedValue()
            box.body()
        }, box.toOpaque(), &now)
    }

    // MARK: Shutdown

    /// Stops accepting connections, ends every event stream cleanly, answers new requests on
    /// open connections with `Connection: close`, and calls `completion` (on the loop thread)
    /// once every in-flight request was answered and the output flushed, or after
    /// `shutdownGracePeriod`. Call `close()` afterwards to drop idle connections.
    public func beginShutdown(completion: @escaping () -> Void) {
        guard !isDraining else { return }
        isDraining = true
        if let http, let boundSocket {
            evhttp_del_accept_socket(http, boundSocket)
            self.boundSocket = nil
        }
        shutdownCompletion = completion
        shutdownDeadline = DispatchTime.now().uptimeNanoseconds + UInt64(configuration.shutdownGracePeriod * 1e9)
        // Each stream's own jittered `retry:` goes last, so thousands of clients of a stopping
        // instance come back spread over seconds, not in the same one.
        for stream in Array(streams.values) { stream.end(retryMilliseconds: jitteredRetry()) }
        shutdownPoll = loop.schedule(after: 0.01, repeating: true) { [unowned self] in checkShutdown() }
        checkShutdown()
    }

    func checkShutdown() {
        guard let completion = shutdownCompletion else { return }
        let flushed = inFlight == 0 && streams.isEmpty && connections.values.allSatisfy { $0.bufferedOutput == 0 }
        guard flushed || DispatchTime.now().uptimeNanoseconds >= shutdownDeadline else { return }
        shutdownCompletion = nil
        shutdownPoll?.cancel()
        shutdownPoll = nil
        completion()
    }

    /// Frees evhttp: closes the listener and every connection (their streams see `onClose`).
    public func close() {
        shutdownPoll?.cancel()
        guard let http else { return }
        self.http = nil
        boundSocket = nil
        evhttp_free(http)
        connections.removeAll()
        stopStreamWorkers()
    }
}
