import HTTPTypes

/// The machine's bounds: refusals, the body budget, the deadlines it asks for, and how a
/// connection's framing ends.
extension FramingMachine {
    /// What the next request evhttp reads stands in for after a refusal: its answer carries the
    /// refusal and closes the connection.
    var standIn: [UInt8] { Array("GET / HTTP/1.\(minorVersion)\r\nConnection: close\r\n\r\n".utf8) }

    /// Refuses the stream from here on (the caller hands on `standIn`): every later byte is dropped.
    mutating func refuse(_ refusal: FramingRefusal, consumed: Int) -> Step {
        refuse()
        return .refuse(refusal, consumed: consumed)
    }

    /// The same, outside `step` (a deadline, admission): the stand-in counts as the next head.
    mutating func refuse() {
        stop(clock.deadline)
        head.removeAll()
        decoder = nil
        bodyEnded()
        phase = .closed
        heads += 1
    }

    /// What a body deadline that expired means for the stream.
    enum BodyExpiry: Equatable {
        /// Nothing of the body was handed on (a chunked body): refuse with a stand-in.
        case standIn
        /// The head was handed on and `remaining` body bytes are still owed: make them up (the
        /// request it completes is answered with the refusal); the stream is closed.
        case fill(remaining: Int)
        /// No body is being received.
        case none
    }

    mutating func expireBody() -> BodyExpiry {
        switch phase {
        case .chunked:
            decoder = nil
            bodyEnded()
            return .standIn
        case .body(let remaining, true):
            phase = .closed
            bodyEnded()
            return .fill(remaining: remaining)
        default:
            return .none
        }
    }

    /// The connection is gone: give back its budget.
    mutating func close() {
        decoder = nil
        releaseBudget()
        phase = .closed
    }

    static func headTooLarge(_ limit: Int) -> FramingRefusal {
        FramingRefusal(status: .requestHeaderFieldsTooLarge, detail: "The request head is larger than \(limit) bytes.")
    }

    /// A body over the server's budget for bodies being received at once.
    static let bodyBudgetRefusal = FramingRefusal(
        status: .serviceUnavailable, detail: "The server is receiving too many request bodies at once; retry shortly.")

    // MARK: The body budget

    /// Takes `length` bytes of the budget for this connection's body.
    mutating func reserve(_ length: Int) -> Bool {
        if let budget {
            guard budget.reserve(length) else { return false }
        }
        reserved += length
        return true
    }

    /// The clean-head paths' reservation: true when the head announces no body libevent reads,
    /// or its body fits the budget (false: the slow path refuses it).
    mutating func reserveFor(_ verdict: CleanHead.Verdict) -> Bool {
        guard verdict.bodyIsRead, verdict.bodyLength > 0 else { return true }
        return reserve(verdict.bodyLength)
    }

    private mutating func releaseBudget() {
        guard reserved > 0 else { return }
        budget?.release(reserved)
        reserved = 0
    }

    /// The body of the request just handed on is complete (or it had none): its budget is free
    /// and its deadline stops.
    mutating func bodyEnded() {
        releaseBudget()
        stop(.body)
    }

    // MARK: Deadlines

    mutating func start(_ deadline: Deadline) {
        clock.deadline = deadline
        clock.started += 1
    }

    /// Stops `deadline` if it is the one running.
    mutating func stop(_ deadline: Deadline) {
        if clock.deadline == deadline { clock.deadline = .none }
    }
}

/// The server's budget for request bodies being received at once (`maxBufferedBodyBytes`),
/// shared by every connection's `FramingMachine`. Loop-thread confined, like the machines.
final class BodyBudget {
    let limit: Int
    /// Bytes reserved now.
    private(set) var used = 0

    init(limit: Int) { self.limit = limit }

    /// Takes `length` bytes; false when they do not fit.
    func reserve(_ length: Int) -> Bool {
        guard length <= limit - used else { return false }
        used += length
        return true
    }

    /// Gives back what `reserve` took (the body is complete, or its connection gone).
    func release(_ length: Int) {
        used = max(0, used - length)
    }
}
