import HTTPTypes

/// The machine's bounds: refusals, the body budget, the deadlines it asks for, and how a
/// connection's framing ends.
extension FramingMachine {
    /// Refuses the stream from here on (the caller answers the refusal): every later byte is dropped.
    mutating func refuse(_ refusal: FramingRefusal, consumed: Int) -> Step {
        refuse()
        return .refuse(refusal, consumed: consumed)
    }

    /// The same, outside `step` (a deadline, admission, a head refused at the head): nothing of
    /// the body is read, every later byte is dropped.
    mutating func refuse() {
        stop(clock.deadline)
        head.removeAll()
        decoder = nil
        bodyEnded()
        phase = .closed
    }

    /// Whether the head just read waits for a body the server reads (a length not yet all
    /// received is in `.body`; a chunked body is always gathered first).
    var awaitsBody: Bool {
        switch phase {
        case .body(_, let forward): forward
        case .chunked: true
        case .head, .closed: false
        }
    }

    /// Body bytes still owed by the head just framed (nil for a chunked body, or none).
    var owedBody: Int? { if case .body(let remaining, true) = phase { remaining } else { nil } }

    /// The head of the chunked body being gathered (nil in any other phase).
    var chunkedHead: ParsedHead? { if case .chunked(let parsed) = phase { parsed } else { nil } }

    /// Whether the machine is between requests (reading a head, or about to).
    var isReadingHead: Bool { if case .head = phase { true } else { false } }

    /// A body deadline expired: whether a body was being received (then the stream is closed and
    /// the request is answered with 408).
    mutating func expireBody() -> Bool {
        switch phase {
        case .chunked, .body(_, true):
            refuse()
            return true
        default:
            return false
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

    /// A body over the server's budget (or the client's share of it) for bodies being received at once.
    static let bodyBudgetRefusal = FramingRefusal(
        status: .serviceUnavailable, detail: "The server is receiving too many request bodies at once; retry shortly.")

    // MARK: The body budget

    /// Takes `length` bytes of the budget for this connection's body, under `client` (the
    /// bytes have arrived and the body is not complete yet).
    mutating func reserve(_ length: Int) -> Bool {
        if let budget {
            if reserved > 0, reservedClient != client {
                // The client was named after the first bytes were taken (a proxy's head): the
                // bytes held move to it.
                budget.move(reserved, from: reservedClient, to: client)
            }
            guard budget.reserve(length, client: client) else { return false }
        }
        reservedClient = client
        reserved += length
        return true
    }

    private mutating func releaseBudget() {
        guard reserved > 0 else { return }
        budget?.release(reserved, client: reservedClient)
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
/// shared by every connection's `FramingMachine`: bytes actually received for bodies not yet
/// complete, in total and per client (`perClient`: one client — an address, or the client a
/// trusted proxy names — cannot take the budget from the others). Heads alone take nothing, and
/// a body that arrives whole takes nothing either: it is handed on at once. Loop-thread confined,
/// like the machines.
final class BodyBudget {
    let limit: Int
    /// Bytes one client may hold (0: only the total applies).
    let perClient: Int
    /// Bytes reserved now.
    private(set) var used = 0
    /// Bytes reserved now, by client.
    private var byClient: [String: Int] = [:]

    init(limit: Int, perClient: Int = 0) {
        self.limit = limit
        self.perClient = perClient
    }

    /// Whether `length` more bytes would fit for `client` now (the decision at a head).
    func hasRoom(for length: Int, client: String?) -> Bool {
        guard length <= limit - used else { return false }
        if perClient > 0, let client, length > perClient - byClient[client, default: 0] { return false }
        return true
    }

    /// Takes `length` bytes for `client`; false when they do not fit.
    func reserve(_ length: Int, client: String?) -> Bool {
        guard hasRoom(for: length, client: client) else { return false }
        used += length
        if perClient > 0, let client { byClient[client, default: 0] += length }
        return true
    }

    /// Gives back what `reserve` took for `client` (the body is complete, or its connection gone).
    func release(_ length: Int, client: String?) {
        used = max(0, used - length)
        guard perClient > 0, let client, let held = byClient[client] else { return }
        if held <= length { byClient.removeValue(forKey: client) } else { byClient[client] = held - length }
    }

    /// Counts `length` reserved bytes under `to` instead of `from` (the total is unchanged).
    func move(_ length: Int, from: String?, to: String?) {
        release(length, client: from)
        used += length
        if perClient > 0, let to { byClient[to, default: 0] += length }
    }

    /// Bytes `client` holds now.
    func held(by client: String) -> Int { byClient[client, default: 0] }
}
