internal import CLibevent
import HTTPTypes
import Foundation

/// The server's lifecycle: listening (an `evconnlistener` with a large backlog), the open-file
/// limit, and the graceful shutdown.
extension HTTPServer {
    /// Binds, listens and starts serving; returns the bound port (useful with port 0).
    /// Also raises the process's open-file limit to its hard limit.
    public func start() throws -> Int {
        precondition(listener == nil, "start() called twice")
        let descriptors = Self.raiseOpenFileLimit()
        descriptorLimit = descriptors
        let limits = Self.limits(configuration, descriptors: descriptors)
        connectionLimit = limits.connections
        streamLimit = limits.streams
        limiter = ConnectionLimiter(total: connectionLimit, perClient: configuration.maxConnectionsPerClient)
        // A write to a vanished client must be an EPIPE error, not a process-killing signal.
        signal(SIGPIPE, SIG_IGN)
        let listener = try makeListener()
        self.listener = listener
        port = Self.localPort(of: evconnlistener_get_fd(listener))
        try startStreamWorkers()
        return port
    }

    /// The listening socket: a large backlog (libevent's own default is 128), and accept
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
        // Accepted sockets are non-blocking and close-on-exec (libevent's accept4 flags).
        guard let listener = evconnlistener_new_bind(loop.base, { _, fd, _, _, context in
            Unmanaged<HTTPServer>.fromOpaque(context!).takeUnretainedValue().accepted(fd)
        }, Unmanaged.passUnretained(self).toOpaque(), flags,
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
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
                // Re-read what is in force; if even that fails, the limit read above stands.
                syscall("getrlimit", tolerating: "the limit read above stands") { getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) }
            }
        }
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }

    func exchangeFinished() {
        inFlight -= 1
        if shutdownCompletion != nil { checkShutdown() }
    }

    // MARK: Shutdown

    /// Stops accepting connections, ends every event stream cleanly, answers new requests on
    /// open connections with `Connection: close`, and calls `completion` (on the loop thread)
    /// once every in-flight request was answered and the output flushed, or after
    /// `shutdownGracePeriod`. Call `close()` afterwards to drop idle connections.
    public func beginShutdown(completion: @escaping () -> Void) {
        guard !isDraining else { return }
        isDraining = true
        if let listener {
            evconnlistener_free(listener)
            self.listener = nil
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

    /// Closes the listener and every connection (their streams see `onClose`).
    public func close() {
        shutdownPoll?.cancel()
        if let listener {
            evconnlistener_free(listener)
            self.listener = nil
        }
        for connection in Array(connections.values) { connection.close() }
        connections.removeAll()
        stopStreamWorkers()
    }
}
