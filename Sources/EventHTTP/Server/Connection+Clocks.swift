internal import CLibevent
import HTTPTypes

/// The connection's deadlines on one libevent timer: a head must be complete within
/// `headerTimeout` of its first byte, a body within `bodyTimeout` of its head; a connection with
/// nothing in flight closes after the idle timeout (the smaller of `idleTimeout` and
/// `readTimeout`); one over its client's share must show its first head within `overCapGrace`;
/// a closing one lingers at most `lingerSeconds`. (A stalled write is the bufferevent's own
/// write timeout.)
extension Connection {
    /// Arms, re-arms or stops the timer when the machine's deadline changed since the last call.
    func syncClock() {
        let wanted = machine.clock
        guard wanted != machineClock else { return }
        machineClock = wanted
        switch wanted.deadline {
        case .head:
            clock = .head
            let seconds = server.configuration.headerTimeout
            if seconds > 0 { armTimer(seconds) } else { stopTimer() }
        case .body:
            clock = .body
            let seconds = server.configuration.bodyTimeout
            if seconds > 0 { armTimer(seconds) } else { stopTimer() }
        case .none:
            if clock == .head || clock == .body {
                clock = .none
                stopTimer()
            }
        }
    }

    /// Between requests with nothing in flight: the idle deadline runs (unless a stricter one does).
    func startIdleClock() {
        guard clock == .none else { return }
        let seconds = min(server.configuration.idleTimeout, server.configuration.readTimeout)
        guard seconds > 0 else { return }
        clock = .idle
        armTimer(seconds)
    }

    func stopIdleClock() {
        guard clock == .idle else { return }
        clock = .none
        stopTimer()
    }

    func armTimer(_ seconds: Double) {
        if timer == nil {
            timer = event_new(server.loop.base, -1, 0, { _, _, context in
                Unmanaged<Connection>.fromOpaque(context!).takeUnretainedValue().clockExpired()
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        var interval = timeval(seconds: seconds)
        if let timer { event_add(timer, &interval) }
    }

    func stopTimer() {
        if let timer { event_del(timer) }
    }

    private func clockExpired() {
        let expired = clock
        clock = .none
        switch expired {
        case .none:
            break
        case .idle:
            // Quietly, as a keep-alive connection times out.
            if isOpen, current == nil, reading == nil { close() }
        case .linger:
            close()
        case .overCap:
            // No head yet: refused as at accept.
            if isOpen, requestsRead == 0, current == nil, let refusal = clientCapRefusal {
                refuse(refusal, head: nil)
            }
        case .head:
            guard isOpen, machine.clock.deadline == .head else { return }
            refuse(FramingRefusal(status: .requestTimeout,
                                  detail: "The request head was not complete within \(server.configuration.headerTimeout.formatted()) seconds of its first byte."),
                   head: nil)
        case .body:
            guard isOpen, let head = reading, machine.expireBody() else { return }
            syncClock()
            refuse(FramingRefusal(status: .requestTimeout,
                                  detail: "The request body was not complete within \(server.configuration.bodyTimeout.formatted()) seconds of its head."),
                   head: head)
        }
    }
}

extension Double {
    /// "10" for 10.0, "2.5" for 2.5.
    fileprivate func formatted() -> String {
        self == rounded() ? String(Int(self)) : String(self)
    }
}
