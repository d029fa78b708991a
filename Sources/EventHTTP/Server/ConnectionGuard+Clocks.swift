internal import CLibevent
import Foundation
import HTTPTypes

/// The guard's deadlines — a head must be complete within `headerTimeout` of its first byte, a
/// body within `bodyTimeout` of its head, a connection over its client's share must show its
/// first head within `overCapGrace` — on one libevent timer, following the deadline the
/// framing machine asks for; and "100 Continue".
extension ConnectionGuard {
    /// Arms, re-arms or stops the timer when the machine's deadline changed since the last call.
    func syncClock() {
        let wanted = machine.clock
        guard wanted != machineClock else { return }
        machineClock = wanted
        switch wanted.deadline {
        case .head:
            guard headerTimeout > 0 else { return }
            clock = .head
            armTimer(headerTimeout)
        case .body:
            guard bodyTimeout > 0 else { return }
            clock = .body
            armTimer(bodyTimeout)
        case .none:
            stopTimer()
        }
    }

    func armTimer(_ seconds: Double) {
        if timer == nil {
            timer = event_new(base, -1, 0, { _, _, context in
                guard let context else { return }
                Unmanaged<ConnectionGuard>.fromOpaque(context).takeUnretainedValue().clockExpired()
            }, Unmanaged.passUnretained(self).toOpaque())
        }
        var interval = timeval(seconds: seconds)
        if let timer { event_add(timer, &interval) }
    }

    func stopTimer() {
        if let timer { event_del(timer) }
    }

    private func clockExpired() {
        switch clock {
        case .none: break
        case .head: headClockExpired()
        case .body: bodyClockExpired()
        case .overCap:
            // No head yet: refused as at accept.
            if machine.heads == 0, let refusal = clientCapRefusal { refuseLater(refusal) }
        }
    }

    private func headClockExpired() {
        guard machine.clock.deadline == .head, let filter else { return }
        // While evhttp is busy with an earlier request it does not read, so the rest of this
        // head cannot arrive: the deadline counts only time the server was listening.
        if (bufferevent_get_enabled(filter) & Int16(EV_READ)) == 0 {
            armTimer(headerTimeout)
            return
        }
        refuseLater(FramingRefusal(status: .requestTimeout, detail: "The request head was not complete within \(headerTimeout.formatted()) seconds of its first byte."))
    }

    private func bodyClockExpired() {
        guard let filter else { return }
        let refusal = FramingRefusal(status: .requestTimeout,
                                     detail: "The request body was not complete within \(bodyTimeout.formatted()) seconds of its head.")
        switch machine.expireBody() {
        case .standIn:
            // evhttp has not seen this head (the guard gathers chunked bodies): a stand-in
            // request carries the refusal, as for a late head.
            syncClock()
            refuseLater(refusal)
        case .fill(let remaining):
            // evhttp has the head and waits for `remaining` more body bytes: they are made up
            // (zeros, never read), so it delivers the request, and its answer is the refusal.
            syncClock()
            refusals[machine.heads - 1] = .framing(refusal)
            evbuffer_drain(pending, evbuffer_get_length(pending))
            guard let input = bufferevent_get_input(filter) else { return }
            withInputUnfrozen(input) { addZeros(remaining, to: input) }
            bufferevent_trigger(filter, Int16(EV_READ), Int32(BEV_TRIG_DEFER_CALLBACKS.rawValue))
        case .none:
            break
        }
    }

    /// "100 Continue" for a client waiting before it sends its body (`headsBefore`: heads
    /// handed on before this one). Sent straight to the socket: evhttp reads (so this runs)
    /// only between responses, with nothing queued, and its bufferevent does not write while
    /// evhttp reads. 25 bytes fit an empty send buffer; if they did not, the client sends its
    /// body after its own wait anyway.
    func sendContinue(headsBefore: Int) {
        guard let filter else { return }
        let fd = Int32(bufferevent_getfd(filter))
        guard fd >= 0, let output = bufferevent_get_output(filter) else { return }
        // Only once every earlier request was answered: an interim answer must never land
        // inside or ahead of an earlier one. If one is still unanswered, no "100 Continue" at
        // all — the client sends its body after its own short wait (RFC 9110 §10.1.1).
        guard requestsSeen == headsBefore, connection?.current == nil else { return }
        // Nor while an earlier answer is still being written: the line must not pass it.
        guard evbuffer_get_length(output) == 0 else { return }
        let line = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)
        line.withUnsafeBytes { line in
            syscall("send", tolerating: "without the interim answer the client sends its body after its own wait") {
                send(fd, line.baseAddress, line.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
            }
        }
    }
}

extension Double {
    /// "10" for 10.0, "2.5" for 2.5.
    fileprivate func formatted() -> String {
        self == rounded() ? String(Int(self)) : String(self)
    }
}
